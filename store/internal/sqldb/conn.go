// Package sqldb is the one implementation of store.Querier shared by the
// SQLite and PostgreSQL drivers. Queries are written once, with "?"
// placeholders and the SQL both databases accept; each driver supplies a
// Conn that runs them (rewriting placeholders where needed) and translates
// its own errors into ErrNoRows and *ConstraintError, and a Dialect for the
// few statements that differ.
package sqldb

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/skilld/skilld/store"
)

// Row is a single result row.
type Row interface {
	Scan(dest ...any) error
}

// Rows is a result set; Close must be called.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// Conn runs statements. Reads go through Query and QueryRow, writes through
// Exec and ExecRow (INSERT/UPDATE … RETURNING), so a driver may send them
// to different connections (SQLite reads from a pool, writes through one
// connection).
type Conn interface {
	Query(ctx context.Context, sql string, args ...any) (Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) Row
	Exec(ctx context.Context, sql string, args ...any) (int64, error)
	ExecRow(ctx context.Context, sql string, args ...any) Row
}

// TxConn is a Conn inside a transaction.
type TxConn interface {
	Conn
	Commit(ctx context.Context) error
	Rollback(ctx context.Context) error
}

// DB is a driver's connection pool.
type DB interface {
	Conn
	Begin(ctx context.Context) (TxConn, error)
	Close() error
}

// Dialect holds what differs between the databases.
type Dialect struct {
	// LockShared is appended to a SELECT to take a shared row lock
	// ("FOR SHARE"); empty where the database serializes writers anyway.
	LockShared string
	// LockUpdate is appended to a SELECT to lock the rows it reads for a
	// change or a delete ("FOR UPDATE"); empty where the database
	// serializes writers anyway.
	LockUpdate string
	// Explain prefixes a statement to get its query plan, which comes back
	// as rows of ExplainColumns columns, the last one describing the node.
	Explain        string
	ExplainColumns int
	// SkillSearch returns the condition (on skills aliased s) and its
	// argument that find a search string in names and descriptions; nil
	// means a LIKE on search_text. When workspace is not empty it replaces
	// the workspace condition ("s.workspace_id = ?"), for a driver whose
	// search index should drive the query instead of the workspace index.
	SkillSearch func(search string) (cond string, arg any, workspace string)
	// MigrationLock, when set, is run first in every migration
	// transaction so that two processes starting at once apply each
	// migration once.
	MigrationLock string
}

// ErrNoRows is what a driver's Row.Scan returns when there is no row.
var ErrNoRows = errors.New("no rows in result set")

// ConstraintError is what a driver returns when a write breaks a
// constraint. Constraint identifies it with the names of its table and
// columns (PostgreSQL's default constraint names, SQLite's message), so
// the shared code can tell which unique key refused a write.
type ConstraintError struct {
	Kind       string // "unique", "foreign_key", "check" or "not_null"
	Constraint string
	Err        error
}

func (e *ConstraintError) Error() string {
	return fmt.Sprintf("%s constraint %s failed: %v", e.Kind, e.Constraint, e.Err)
}

func (e *ConstraintError) Unwrap() error { return e.Err }

// constraint returns the constraint error of kind in err's chain whose
// identity mentions every one of words, or nil.
func constraint(err error, kind string, words ...string) *ConstraintError {
	var ce *ConstraintError
	if !errors.As(err, &ce) || ce.Kind != kind {
		return nil
	}
	for _, w := range words {
		if !strings.Contains(ce.Constraint, w) {
			return nil
		}
	}
	return ce
}

// LikeSearch is the portable substring condition, the SkillSearch of a
// Dialect that sets none and the fallback of one that does.
func LikeSearch(search string) (string, any, string) {
	return `s.search_text LIKE ? ESCAPE '\'`, store.LikePattern(search), ""
}
