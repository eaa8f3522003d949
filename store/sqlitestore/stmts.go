package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

// maxCachedStmts bounds the statement cache. The store's queries are a
// fixed set of strings (filters add a bounded number of variants), so the
// bound only guards against a caller that builds unbounded ones.
const maxCachedStmts = 512

// stmts keeps a prepared statement per query string. SQLite parses and
// plans a statement on every prepare, which profiles of a task-heavy load
// showed as a fifth of the CPU; database/sql keeps a statement prepared
// on each connection it has been used on, so a cached one costs a lookup.
type stmts struct {
	db     *sql.DB
	mu     sync.Mutex
	m      map[string]*sql.Stmt
	wanted map[string]struct{}
}

func newStmts(db *sql.DB) *stmts {
	return &stmts{db: db, m: map[string]*sql.Stmt{}, wanted: map[string]struct{}{}}
}

// cached returns q prepared, or nil when it is not; it notes q as wanted.
// A transaction holds the writer's only connection, so it cannot prepare
// on the pool: it runs q unprepared, and the statement is prepared once
// the transaction has ended (prepareWanted).
func (s *stmts) cached(q string) *sql.Stmt {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.m[q]
	if !ok && len(s.m)+len(s.wanted) < maxCachedStmts {
		s.wanted[q] = struct{}{}
	}
	return st
}

// prepareWanted prepares the queries transactions ran unprepared.
func (s *stmts) prepareWanted(ctx context.Context) {
	s.mu.Lock()
	wanted := s.wanted
	s.wanted = map[string]struct{}{}
	s.mu.Unlock()
	for q := range wanted {
		s.get(ctx, q)
	}
}

// get returns q prepared, or nil when the cache is full. It prepares
// without holding the lock: preparing on the writer waits for its one
// connection, which a transaction that needs the lock may hold.
func (s *stmts) get(ctx context.Context, q string) (*sql.Stmt, error) {
	s.mu.Lock()
	st, ok := s.m[q]
	full := len(s.m) >= maxCachedStmts
	s.mu.Unlock()
	if ok || full {
		return st, nil
	}
	st, err := s.db.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if had, ok := s.m[q]; ok {
		st.Close()
		return had, nil
	}
	s.m[q] = st
	return st, nil
}

func (s *stmts) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for q, st := range s.m {
		errs = append(errs, st.Close())
		delete(s.m, q)
	}
	return errors.Join(errs...)
}

// cachedDB is a pool whose queries use the cache.
type cachedDB struct {
	db    *sql.DB
	stmts *stmts
}

func (c cachedDB) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	st, err := c.stmts.get(ctx, q)
	if err != nil || st == nil {
		return c.db.QueryContext(ctx, q, args...)
	}
	return st.QueryContext(ctx, args...)
}

func (c cachedDB) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	st, err := c.stmts.get(ctx, q)
	if err != nil || st == nil {
		return c.db.QueryRowContext(ctx, q, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

func (c cachedDB) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	st, err := c.stmts.get(ctx, q)
	if err != nil || st == nil {
		return c.db.ExecContext(ctx, q, args...)
	}
	return st.ExecContext(ctx, args...)
}

// cachedTx is a transaction whose queries use the writer's cache: the
// statement is already prepared on the transaction's connection.
type cachedTx struct {
	tx    *sql.Tx
	stmts *stmts
}

func (c cachedTx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	st := c.stmts.cached(q)
	if st == nil {
		return c.tx.QueryContext(ctx, q, args...)
	}
	return c.tx.StmtContext(ctx, st).QueryContext(ctx, args...)
}

func (c cachedTx) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	st := c.stmts.cached(q)
	if st == nil {
		return c.tx.QueryRowContext(ctx, q, args...)
	}
	return c.tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
}

func (c cachedTx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	st := c.stmts.cached(q)
	if st == nil {
		return c.tx.ExecContext(ctx, q, args...)
	}
	return c.tx.StmtContext(ctx, st).ExecContext(ctx, args...)
}
