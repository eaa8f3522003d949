package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store/internal/sqldb"
)

// querier is what *sql.DB and *sql.Tx have in common.
type querier interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
}

// conn sends reads to r and writes to w: outside a transaction the
// read-only pool and the single writer, inside one the transaction for both.
type conn struct {
	r, w querier
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
	res, err := c.w.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, translate(err)
	}
	return res.RowsAffected()
}

func (c conn) ExecRow(ctx context.Context, q string, args ...any) sqldb.Row {
	return sqlRow{c.w.QueryRowContext(ctx, q, args...)}
}

type db struct {
	conn
	reader, writer *sql.DB
	rstmts, wstmts *stmts
}

func newDB(reader, writer *sql.DB) *db {
	r, w := newStmts(reader), newStmts(writer)
	return &db{conn: conn{r: cachedDB{reader, r}, w: cachedDB{writer, w}}, reader: reader, writer: writer, rstmts: r, wstmts: w}
}

func (d *db) Begin(ctx context.Context) (sqldb.TxConn, error) {
	tx, err := d.writer.BeginTx(ctx, nil)
	if err != nil {
		return nil, translate(err)
	}
	c := cachedTx{tx, d.wstmts}
	return txConn{conn: conn{r: c, w: c}, tx: tx, stmts: d.wstmts}, nil
}

func (d *db) Close() error {
	return errors.Join(d.rstmts.close(), d.wstmts.close(), d.reader.Close(), d.writer.Close())
}

type txConn struct {
	conn
	tx    *sql.Tx
	stmts *stmts
}

func (t txConn) Commit(ctx context.Context) error {
	err := t.tx.Commit()
	t.stmts.prepareWanted(context.WithoutCancel(ctx))
	return translate(err)
}

func (t txConn) Rollback(ctx context.Context) error {
	err := t.tx.Rollback()
	t.stmts.prepareWanted(context.WithoutCancel(ctx))
	return translate(err)
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
// Any other error is the database's, marked skilld.BackendDatabase.
func translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return sqldb.ErrNoRows
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return skilld.FromBackend(skilld.BackendDatabase, err)
	}
	switch se.Code() & 0xff { // the primary code
	case sqlite3.SQLITE_FULL:
		return skilld.FromBackend(skilld.BackendDatabase,
			&skilld.Error{Code: skilld.EUNAVAILABLE, Message: "the database: the disk is full; retry once an operator has freed space", Err: err})
	case sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_IOERR:
		// Most often out of descriptors or space, or a file system gone
		// read-only: the store's, not the request's, and it may pass.
		return skilld.FromBackend(skilld.BackendDatabase,
			&skilld.Error{Code: skilld.EUNAVAILABLE, Message: "the database cannot open, read or write its file; retry shortly", Err: err})
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
		return skilld.FromBackend(skilld.BackendDatabase, err)
	}
	_, ident, _ := strings.Cut(se.Error(), "constraint failed: ")
	ident, _, _ = strings.Cut(ident, " (")
	return &sqldb.ConstraintError{Kind: kind, Constraint: ident, Err: err}
}
