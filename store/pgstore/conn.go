package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store/internal/sqldb"
)

// querier is what pgxpool.Pool and pgx.Tx have in common.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// conn runs the shared "?" queries on PostgreSQL, rewriting placeholders to
// $1, $2, … once per distinct statement.
type conn struct {
	q     querier
	binds *sync.Map // query text → rewritten text, shared with transactions
	// timeout bounds each call (store.Options.CallTimeout).
	timeout time.Duration
}

// errCallTimeout is the cause of a call's context that ran out of the
// store's time, told apart from the caller's own deadline.
var errCallTimeout = errors.New("call timeout")

// unbounded marks a context whose calls have no timeout of the store's
// (migrations, which may rightly take long).
type unbounded struct{}

// bound gives a call the store's deadline, unless the caller's is sooner
// or the context is unbounded.
func (c conn) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.timeout <= 0 || ctx.Value(unbounded{}) != nil {
		return ctx, func() {}
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= c.timeout {
		return ctx, func() {}
	}
	return context.WithTimeoutCause(ctx, c.timeout, errCallTimeout)
}

// fail translates a call's error; one that ran out of the store's time is
// EUNAVAILABLE saying so: the database hangs.
func (c conn) fail(ctx context.Context, err error) error {
	if err != nil && errors.Is(context.Cause(ctx), errCallTimeout) {
		return skilld.FromBackend(skilld.BackendDatabase, &skilld.Error{Code: skilld.EUNAVAILABLE, Err: err,
			Message: fmt.Sprintf("the database did not answer within %s; retry shortly", c.timeout)})
	}
	return translate(err)
}

func (c conn) Query(ctx context.Context, sql string, args ...any) (sqldb.Rows, error) {
	ctx, cancel := c.bound(ctx)
	rows, err := c.q.Query(ctx, c.rebind(sql), args...)
	if err != nil {
		cancel()
		return nil, c.fail(ctx, err)
	}
	return pgRows{r: rows, c: c, ctx: ctx, cancel: cancel}, nil
}

func (c conn) QueryRow(ctx context.Context, sql string, args ...any) sqldb.Row {
	ctx, cancel := c.bound(ctx)
	return pgRow{r: c.q.QueryRow(ctx, c.rebind(sql), args...), c: c, ctx: ctx, cancel: cancel}
}

func (c conn) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	tag, err := c.q.Exec(ctx, c.rebind(sql), args...)
	if err != nil {
		return 0, c.fail(ctx, err)
	}
	return tag.RowsAffected(), nil
}

func (c conn) ExecRow(ctx context.Context, sql string, args ...any) sqldb.Row {
	return c.QueryRow(ctx, sql, args...)
}

func (c conn) rebind(sql string) string {
	if v, ok := c.binds.Load(sql); ok {
		return v.(string)
	}
	out := rebind(sql)
	c.binds.Store(sql, out)
	return out
}

// rebind turns each "?" outside a quoted string into $1, $2, ….
func rebind(sql string) string {
	var b strings.Builder
	b.Grow(len(sql) + 16)
	n, quoted := 0, false
	for i := 0; i < len(sql); i++ {
		c := sql[i]
		switch {
		case c == '\'':
			quoted = !quoted
		case c == '?' && !quoted:
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

type db struct {
	conn
	pool *pgxpool.Pool
}

func newDB(pool *pgxpool.Pool, timeout time.Duration) *db {
	return &db{conn: conn{q: pool, binds: &sync.Map{}, timeout: timeout}, pool: pool}
}

func (d *db) Begin(ctx context.Context) (sqldb.TxConn, error) {
	bctx, cancel := d.bound(ctx)
	defer cancel()
	tx, err := d.pool.Begin(bctx)
	if err != nil {
		return nil, d.fail(bctx, err)
	}
	return txConn{conn: conn{q: tx, binds: d.binds, timeout: d.timeout}, tx: tx}, nil
}

func (d *db) Close() error {
	d.pool.Close()
	return nil
}

type txConn struct {
	conn
	tx pgx.Tx
}

func (t txConn) Commit(ctx context.Context) error {
	ctx, cancel := t.bound(ctx)
	defer cancel()
	return t.fail(ctx, t.tx.Commit(ctx))
}

func (t txConn) Rollback(ctx context.Context) error {
	ctx, cancel := t.bound(ctx)
	defer cancel()
	return t.fail(ctx, t.tx.Rollback(ctx))
}

// pgRow is a row whose call ends (its deadline released) once scanned.
type pgRow struct {
	r      pgx.Row
	c      conn
	ctx    context.Context
	cancel context.CancelFunc
}

func (r pgRow) Scan(dest ...any) error {
	defer r.cancel()
	return r.c.fail(r.ctx, r.r.Scan(dest...))
}

// pgRows are rows whose call ends once closed.
type pgRows struct {
	r      pgx.Rows
	c      conn
	ctx    context.Context
	cancel context.CancelFunc
}

func (r pgRows) Next() bool             { return r.r.Next() }
func (r pgRows) Scan(dest ...any) error { return r.c.fail(r.ctx, r.r.Scan(dest...)) }
func (r pgRows) Err() error             { return r.c.fail(r.ctx, r.r.Err()) }
func (r pgRows) Close()                 { r.r.Close(); r.cancel() }

// translate maps PostgreSQL errors onto the shared vocabulary and marks
// those that are the database's (not a missing row or a constraint the
// caller broke) as skilld.BackendDatabase. Constraints
// keep PostgreSQL's default names (skills_workspace_id_slug_key), which
// name their table and columns.
func translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return sqldb.ErrNoRows
	}
	var pe *pgconn.PgError
	if unavailable(err) {
		msg := "the database is unavailable; retry shortly"
		if errors.As(err, &pe) && pe.Code == "53100" {
			msg = "the database: the disk is full; retry once an operator has freed space"
		}
		return skilld.FromBackend(skilld.BackendDatabase, &skilld.Error{Code: skilld.EUNAVAILABLE, Message: msg, Err: err})
	}
	if !errors.As(err, &pe) {
		return skilld.FromBackend(skilld.BackendDatabase, err)
	}
	kind := ""
	switch pe.Code {
	case "23505":
		kind = "unique"
	case "23503":
		kind = "foreign_key"
	case "23514":
		kind = "check"
	case "23502":
		kind = "not_null"
	default:
		return skilld.FromBackend(skilld.BackendDatabase, err)
	}
	return &sqldb.ConstraintError{Kind: kind, Constraint: pe.ConstraintName, Err: err}
}

// unavailable reports whether err means PostgreSQL cannot be reached or is
// not serving right now — a refused or broken connection, a server
// shutting down or starting up, no connection slots — rather than a fault
// of the statement. Those are EUNAVAILABLE: callers that wait out storage
// outages retry them, and the API answers 503 with Retry-After.
func unavailable(err error) bool {
	var ce *pgconn.ConnectError
	var pe *pgconn.PgError
	var ne net.Error
	switch {
	case errors.As(err, &ce):
		return true
	case errors.As(err, &pe):
		return strings.HasPrefix(pe.Code, "08") || // connection exception
			pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03" || // shutting down, crashed, starting
			strings.HasPrefix(pe.Code, "53") // insufficient resources: disk full, out of memory, too many connections
	case errors.Is(err, pgconn.ErrConnClosed), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	case errors.As(err, &ne):
		return !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled)
	}
	return false
}
