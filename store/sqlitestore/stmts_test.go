package sqlitestore

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
)

func openPair(t *testing.T) *db {
	t.Helper()
	dsn := "file:" + filepath.Join(t.TempDir(), "s.db") + "?" + pragmas
	w, err := sql.Open("sqlite", dsn+"&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	w.SetMaxOpenConns(1)
	r, err := sql.Open("sqlite", dsn+"&_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	d := newDB(r, w)
	t.Cleanup(func() { d.Close() })
	if _, err := d.Exec(t.Context(), `CREATE TABLE kv (k INTEGER PRIMARY KEY, v TEXT)`); err != nil {
		t.Fatal(err)
	}
	return d
}

// A statement first run in a transaction is prepared once the transaction
// has ended, and used prepared by the next ones.
func TestStmtsPreparedAfterTransaction(t *testing.T) {
	d := openPair(t)
	const q = `INSERT INTO kv (k, v) VALUES (?, ?) RETURNING k`
	for i := range 3 {
		tx, err := d.Begin(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var k int
		if err := tx.ExecRow(t.Context(), q, i, "x").Scan(&k); err != nil || k != i {
			t.Fatalf("insert %d: %d, %v", i, k, err)
		}
		if err := tx.Commit(t.Context()); err != nil {
			t.Fatal(err)
		}
		if d.wstmts.cached(q) == nil {
			t.Fatalf("after transaction %d the insert is not prepared", i)
		}
	}
	var n int
	if err := d.QueryRow(t.Context(), `SELECT count(*) FROM kv`).Scan(&n); err != nil || n != 3 {
		t.Fatalf("%d rows, %v", n, err)
	}
}

// The cache holds at most maxCachedStmts statements; queries beyond run
// unprepared.
func TestStmtsBounded(t *testing.T) {
	d := openPair(t)
	for i := range maxCachedStmts + 50 {
		var v int
		if err := d.QueryRow(t.Context(), fmt.Sprintf(`SELECT %d`, i)).Scan(&v); err != nil || v != i {
			t.Fatalf("query %d: %d, %v", i, v, err)
		}
	}
	d.rstmts.mu.Lock()
	defer d.rstmts.mu.Unlock()
	if len(d.rstmts.m) > maxCachedStmts {
		t.Errorf("%d statements cached", len(d.rstmts.m))
	}
}

// Transactions and single writes interleaving on the one writer
// connection never wait on each other through the cache (a prepare that
// held the cache's lock while waiting for the connection once deadlocked
// against a transaction asking the cache).
func TestStmtsTransactionsAndWrites(t *testing.T) {
	d := openPair(t)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				k := g*1000 + i
				if g%2 == 0 {
					if _, err := d.Exec(t.Context(), `INSERT INTO kv (k, v) VALUES (?, ?)`, k, "w"); err != nil {
						t.Error(err)
					}
					continue
				}
				tx, err := d.Begin(t.Context())
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := tx.Exec(t.Context(), fmt.Sprintf(`INSERT INTO kv (k, v) VALUES (?, 't%d')`, i%5), k); err != nil {
					t.Error(err)
				}
				if err := tx.Commit(t.Context()); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	var n int
	if err := d.QueryRow(t.Context(), `SELECT count(*) FROM kv`).Scan(&n); err != nil || n != 400 {
		t.Fatalf("%d rows, %v", n, err)
	}
}
