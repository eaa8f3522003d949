package executor_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/skilld/skilld/executor/executortest"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/sqlitestore"
	"github.com/skilld/skilld/store/storetest"
)

// loadStores are the databases the load benchmarks run on.
var loadStores = []struct {
	name string
	open func(testing.TB) store.Store
}{
	{"sqlite", func(tb testing.TB) store.Store { return storetest.OpenSQLite(tb) }},
	{"postgres", func(tb testing.TB) store.Store { return storetest.OpenPostgres(tb) }},
}

// BenchmarkLoad runs 500 tasks at once on the local executor, each five
// write_file steps and an answer from a model with no think time, with
// room for all of them and with the default pool of 64. One iteration is
// one load: run it with -benchtime=1x.
func BenchmarkLoad(b *testing.B) {
	for _, st := range loadStores {
		for _, pool := range []struct {
			name string
			max  int
		}{{"pool-500", 500}, {"pool-64", 0}} {
			b.Run(st.name+"/"+pool.name, func(b *testing.B) {
				executortest.Bench(b, localEnv, st.open, executortest.Load{Tasks: 500, Steps: 5, MaxRunning: pool.max})
			})
		}
	}
}

// BenchmarkStep runs ten tasks of 40 write_file steps one after another:
// the overhead of a step with nothing else running.
func BenchmarkStep(b *testing.B) {
	for _, st := range loadStores {
		b.Run(st.name, func(b *testing.B) {
			executortest.Bench(b, localEnv, st.open, executortest.Load{Tasks: 1, Steps: 40, Rounds: 10})
		})
	}
}

// BenchmarkIdleTask measures what 500 tasks waiting for an approval hold
// in memory, per task.
func BenchmarkIdleTask(b *testing.B) {
	executortest.BenchIdle(b, localEnv, loadStores[0].open, 500)
}

// BenchmarkLoadVsFloor runs the load of BenchmarkLoad (500 tasks at once,
// room for all) and, in the same iteration, its floor: as many single-row
// transactional inserts as it appended log entries, into a table shaped
// like the task log, with the store's settings (SQLite: the same pragmas
// and one writer connection; PostgreSQL: a pool as the store opens it).
// of-floor is the load's entries per second over the floor's. Run it with
// -benchtime=1x -count 5 and compare the medians.
func BenchmarkLoadVsFloor(b *testing.B) {
	floors := map[string]func(testing.TB) executortest.FloorDB{"sqlite": sqliteFloor, "postgres": postgresFloor}
	for _, st := range loadStores {
		b.Run(st.name, func(b *testing.B) {
			executortest.BenchVsFloor(b, localEnv, st.open, floors[st.name], executortest.Load{Tasks: 500, Steps: 5, MaxRunning: 500})
		})
	}
}

const floorTable = `CREATE TABLE log (task_id TEXT NOT NULL, seq BIGINT NOT NULL, kind TEXT NOT NULL, payload %s NOT NULL, created_at %s NOT NULL, PRIMARY KEY (task_id, seq))`

type sqlFloor struct{ db *sql.DB }

func sqliteFloor(tb testing.TB) executortest.FloorDB {
	db, err := sql.Open("sqlite", sqlitestore.WriterDSN(filepath.Join(tb.TempDir(), "floor.db")))
	if err != nil {
		tb.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	tb.Cleanup(func() { db.Close() })
	if _, err := db.ExecContext(tb.Context(), fmt.Sprintf(floorTable, "TEXT", "DATETIME")+" WITHOUT ROWID"); err != nil {
		tb.Fatal(err)
	}
	return sqlFloor{db}
}

func (f sqlFloor) Insert(ctx context.Context, taskID string, seq int64, kind string, payload []byte) error {
	tx, err := f.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO log (task_id, seq, kind, payload, created_at) VALUES (?, ?, ?, ?, ?)`,
		taskID, seq, kind, string(payload), time.Now().UTC()); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

type pgFloor struct{ pool *pgxpool.Pool }

func postgresFloor(tb testing.TB) executortest.FloorDB {
	pool, err := pgxpool.New(tb.Context(), storetest.FreshPostgresURL(tb))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(pool.Close)
	if _, err := pool.Exec(tb.Context(), fmt.Sprintf(floorTable, "JSONB", "TIMESTAMPTZ")); err != nil {
		tb.Fatal(err)
	}
	return pgFloor{pool}
}

func (f pgFloor) Insert(ctx context.Context, taskID string, seq int64, kind string, payload []byte) error {
	tx, err := f.pool.Begin(ctx)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO log (task_id, seq, kind, payload, created_at) VALUES ($1, $2, $3, $4, $5)`,
		taskID, seq, kind, string(payload), time.Now().UTC()); err != nil {
		tx.Rollback(ctx)
		return err
	}
	return tx.Commit(ctx)
}
