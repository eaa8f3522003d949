// Package sqlitestore is the SQLite driver of the store contract: one file,
// no server, through the pure-Go modernc.org/sqlite (so the skilld binary
// needs no C toolchain). The database runs in WAL mode with foreign keys
// on and a busy timeout; every write goes through a single connection, so
// writers queue in Go instead of failing with SQLITE_BUSY, while reads use
// a pool of read-only connections.
package sqlitestore

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/internal/sqldb"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Store is an open SQLite database.
type Store struct {
	*sqldb.Store
}

var _ store.Store = (*Store)(nil)

// pragmas apply to every connection. synchronous=NORMAL is safe in WAL
// mode: a power loss may drop the last commits but never corrupts.
const pragmas = "_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)"

// WriterDSN is the database/sql data source name (driver "sqlite") the
// store's one writer connection opens path with: its pragmas, and write
// transactions that take the lock when they begin. Benchmarks open it to
// measure the database without the store.
func WriterDSN(path string) string {
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + pragmas + "&_txlock=immediate"
}

// Open opens (creating if needed) the database file at path and applies
// pending migrations unless opts says not to.
func Open(ctx context.Context, path string, opts *store.Options) (*Store, error) {
	if opts == nil {
		opts = &store.Options{}
	}
	if path == "" {
		return nil, skilld.Errorf(skilld.EINVALID, "sqlite: empty database path")
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, skilld.Errorf(skilld.EUNAVAILABLE, "sqlite: creating %s: %w", dir, err)
		}
	}
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + pragmas
	w, err := sql.Open("sqlite", WriterDSN(path))
	if err != nil {
		return nil, skilld.Errorf(skilld.EUNAVAILABLE, "sqlite: opening %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0)
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		return nil, skilld.Errorf(skilld.EUNAVAILABLE, "sqlite: opening %s: %w", path, err)
	}
	r, err := sql.Open("sqlite", dsn+"&_pragma=query_only(1)")
	if err != nil {
		w.Close()
		return nil, skilld.Errorf(skilld.EUNAVAILABLE, "sqlite: opening %s: %w", path, err)
	}
	// Every open reader is kept: database/sql keeps two idle by default,
	// so more concurrent reads than that closed and reopened connections
	// (the open, its pragmas and each statement's preparation again) for
	// every burst of requests.
	readers := max(4, runtime.GOMAXPROCS(0))
	r.SetMaxOpenConns(readers)
	r.SetMaxIdleConns(readers)
	migrations, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		w.Close()
		r.Close()
		return nil, err
	}
	s, err := sqldb.New(newDB(r, w), &sqldb.Dialect{Explain: "EXPLAIN QUERY PLAN", ExplainColumns: 4, SkillSearch: trigramSearch}, migrations)
	if err != nil {
		w.Close()
		r.Close()
		return nil, err
	}
	if !opts.SkipMigrate {
		if _, err := s.Migrate(ctx); err != nil {
			s.Close()
			return nil, fmt.Errorf("sqlite %s: %w", path, err)
		}
	}
	return &Store{Store: s}, nil
}

// trigramSearch finds a search string through the skills_search trigram
// index. The index answers LIKE only without an ESCAPE clause, so a search
// holding a LIKE wildcard, or shorter than a trigram, reads the rows
// instead. When the index is used it drives the query: the workspace
// condition is written "+s.workspace_id" so that SQLite does not walk the
// workspace's index and test every row against the matches (measured on
// 100,000 skills: 42 ms that way, ~2 ms driven by the index).
func trigramSearch(search string) (string, any, string) {
	term := strings.ToLower(search)
	if len([]rune(term)) < 3 || strings.ContainsAny(term, `%_\`) {
		return sqldb.LikeSearch(search)
	}
	return `s.rowid IN (SELECT rowid FROM skills_search WHERE search_text LIKE ?)`, "%" + term + "%", "+s.workspace_id = ?"
}
