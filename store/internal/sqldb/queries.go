package sqldb

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/google/uuid"

	"github.com/skilld/skilld/store"
)

// Queries implements store.Querier over a Conn.
type Queries struct {
	c  Conn
	d  *Dialect
	db DB // set outside a transaction: multi-statement methods begin one
}

var _ store.Querier = (*Queries)(nil)

// Store is a store.Store over a driver's DB.
type Store struct {
	Queries
	migrations []migration
}

var _ store.Store = (*Store)(nil)

// New returns a store over db. migrations holds the driver's migration
// files, NNNN_description.sql, at its root.
func New(db DB, d *Dialect, migrations fs.FS) (*Store, error) {
	ms, err := readMigrations(migrations)
	if err != nil {
		return nil, err
	}
	return &Store{Queries: Queries{c: db, d: d, db: db}, migrations: ms}, nil
}

// Close closes the connection pool.
func (s *Store) Close() error { return s.db.Close() }

// Tx runs fn in a transaction.
func (s *Store) Tx(ctx context.Context, fn func(q store.Querier) error) error {
	return s.tx(ctx, func(q *Queries) error { return fn(q) })
}

// tx runs fn in a transaction: q itself when it already is one, a new one
// otherwise. A panic in fn rolls back and is re-raised.
func (q *Queries) tx(ctx context.Context, fn func(q *Queries) error) (err error) {
	if q.db == nil {
		return fn(q)
	}
	t, err := q.db.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	done := false
	defer func() {
		if !done {
			t.Rollback(context.WithoutCancel(ctx))
		}
	}()
	if err := fn(&Queries{c: t, d: q.d}); err != nil {
		return err
	}
	done = true
	if err := t.Commit(ctx); err != nil {
		t.Rollback(context.WithoutCancel(ctx))
		return internal(err, "commit")
	}
	return nil
}

// newID returns a UUIDv7: unique, and ordered by creation time so that
// "newest first" is an index scan on the primary key.
func newID() string { return uuid.Must(uuid.NewV7()).String() }

// now is the time written to rows: UTC, at the microsecond precision both
// databases keep, so a value read back equals the value written.
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// utc normalizes a scanned time.
func utc(t time.Time) time.Time { return t.UTC() }

func utcp(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// collect scans every row with scan, closing rows.
func collect[T any](rows Rows, err error, scan func(Row) (T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// scanValue scans a row of one column.
func scanValue[T any](r Row) (T, error) {
	var v T
	err := r.Scan(&v)
	return v, err
}

// isNoRows reports a missing row.
func isNoRows(err error) bool { return errors.Is(err, ErrNoRows) }
