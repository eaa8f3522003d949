package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/skilld/skilld/store/internal/sqldb"
)

// conn sends reads to the read-only pool and writes to the single writer.
type conn struct {
	r, w *sql.DB
}

func (c conn) Query(ctx context.Context, q string, args ...any) (sqldb.Rows, error) {
	rows, err := c.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, translate(err)
	}
	return sqlRows{rows}, nil
}

func (c conn) QueryRow(ctx context.Context, q string, args ...any) sqldb.Row {
	return sqlRow{c.r.QueryRowContext(ctx, q, args...)}
}

func (c conn) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	return exec(ctx, c.w, q, args...)
}

func (c conn) ExecRow(ctx context.Context, q string, args ...any) sqldb.Row {
	return sqlRow{c.w.QueryRowContext(ctx, q, args...)}
}

type db struct{ conn }

func (d *db) Begin(ctx context.Context) (sqldb.TxConn, error) {
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, translate(err)
	}
	return txConn{tx}, nil
}

func (d *db) Close() error {
	return errors.Join(d.r.Close(), d.w.Close())
}

// txConn runs everything, reads included, in the transaction.
type txConn struct{ tx *sql.Tx }

func (t txConn) Query(ctx context.Context, q string, args ...any) (sqldb.Rows, error) {
	rows, err := t.tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, translate(err)
	}
	return sqlRows{rows}, nil
}

func (t txConn) QueryRow(ctx context.Context, q string, args ...any) sqldb.Row {
	return sqlRow{t.tx.QueryRowContext(ctx, q, args...)}
}

func (t txConn) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	return exec(ctx, t.tx, q, args...)
}

func (t txConn) ExecRow(ctx context.Context, q string, args ...any) sqldb.Row {
	return sqlRow{t.tx.QueryRowContext(ctx, q, args...)}
}

func (t txConn) Commit(context.Context) error   { return translate(t.tx.Commit()) }
func (t txConn) Rollback(context.Context) error { return translate(t.tx.Rollback()) }

type execer interface {
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
}

func exec(ctx context.Context, e execer, q string, args ...any) (int64, error) {
	res, err := e.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, translate(err)
	}
	return res.RowsAffected()
}

type sqlRow struct{ r *sql.Row }

func (r sqlRow) Scan(dest ...any) error { return translate(r.r.Scan(dest...)) }

type sqlRows struct{ r *sql.Rows }

func (r sqlRows) Next() bool             { return r.r.Next() }
func (r sqlRows) Scan(dest ...any) error { return translate(r.r.Scan(dest...)) }
func (r sqlRows) Err() error             { return translate(r.r.Err()) }
func (r sqlRows) Close()                 { r.r.Close() }

// translate maps SQLite's errors onto the shared vocabulary: no rows, and
// constraint failures identified by the table and columns SQLite names in
// its message ("UNIQUE constraint failed: skills.workspace_id, skills.slug").
func translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return sqldb.ErrNoRows
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return err
	}
	kind := ""
	switch se.Code() {
	case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		kind = "unique"
	case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
		kind = "foreign_key"
	case sqlite3.SQLITE_CONSTRAINT_CHECK:
		kind = "check"
	case sqlite3.SQLITE_CONSTRAINT_NOTNULL:
		kind = "not_null"
	default:
		return err
	}
	_, ident, _ := strings.Cut(se.Error(), "constraint failed: ")
	ident, _, _ = strings.Cut(ident, " (")
	return &sqldb.ConstraintError{Kind: kind, Constraint: ident, Err: err}
}
