// Package pgstore is the PostgreSQL driver of the store contract, through
// pgx/v5 and its connection pool. It is what skilld uses when it scales out:
// any number of server and worker processes share one database.
package pgstore

import (
	"cmp"
	"context"
	"embed"
	"fmt"
	"io/fs"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/internal/sqldb"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Store is an open PostgreSQL database.
type Store struct {
	*sqldb.Store
}

var _ store.Store = (*Store)(nil)

// migrationLockKey is an arbitrary constant shared by every skilld process,
// so that processes starting together apply each migration once.
const migrationLockKey = 7_271_133_701

// Open connects to the database at url (postgres://user:pass@host:port/db
// ?sslmode=…; other query parameters such as search_path become session
// settings) and applies pending migrations unless opts says not to.
func Open(ctx context.Context, url string, opts *store.Options) (*Store, error) {
	if opts == nil {
		opts = &store.Options{}
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, skilld.Errorf(skilld.EINVALID, "postgres: bad database URL: %v", redact(err.Error(), url))
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, skilld.Errorf(skilld.EUNAVAILABLE, "postgres: %v", redact(err.Error(), url))
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, skilld.Errorf(skilld.EUNAVAILABLE, "postgres: cannot connect to %s:%d: %v", cfg.ConnConfig.Host, cfg.ConnConfig.Port, err)
	}
	migrations, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		pool.Close()
		return nil, err
	}
	s, err := sqldb.New(newDB(pool, cmp.Or(opts.CallTimeout, store.DefaultCallTimeout)), &sqldb.Dialect{
		LockShared:     "FOR SHARE",
		LockUpdate:     "FOR UPDATE",
		Explain:        "EXPLAIN",
		ExplainColumns: 1,
		MigrationLock:  fmt.Sprintf("SELECT pg_advisory_xact_lock(%d)", migrationLockKey),
	}, migrations)
	if err != nil {
		pool.Close()
		return nil, err
	}
	if !opts.SkipMigrate {
		if _, err := s.Migrate(context.WithValue(ctx, unbounded{}, true)); err != nil {
			s.Close()
			return nil, fmt.Errorf("postgres: %w", err)
		}
	}
	return &Store{Store: s}, nil
}

// redact keeps a password in a URL out of error messages.
func redact(msg, url string) string {
	if i := strings.Index(url, "://"); i >= 0 {
		if at := strings.LastIndex(url, "@"); at > i {
			if colon := strings.Index(url[i+3:at], ":"); colon >= 0 {
				pw := url[i+3+colon+1 : at]
				if pw != "" {
					msg = strings.ReplaceAll(msg, pw, "xxxxx")
				}
			}
		}
	}
	return msg
}
