package storetest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/pgstore"
	"github.com/skilld/skilld/store/sqlitestore"
)

// Driver names a database driver and opens fresh stores of it for tests.
type Driver struct {
	Name string
	Open Opener
}

// Drivers returns every driver the tests can reach: SQLite always, and
// PostgreSQL when SKILLD_TEST_POSTGRES_URL is set. Under CI=true PostgreSQL
// is required and its absence fails the test.
func Drivers(t *testing.T) []Driver {
	ds := []Driver{{"sqlite", func(t *testing.T) store.Store { return OpenSQLite(t) }}}
	if PostgresURL(t, false) != "" {
		ds = append(ds, Driver{"postgres", func(t *testing.T) store.Store { return OpenPostgres(t) }})
	}
	return ds
}

// OpenSQLite opens a migrated SQLite store in a temp dir, closed at the end
// of the test.
func OpenSQLite(t testing.TB) *sqlitestore.Store {
	t.Helper()
	s, err := sqlitestore.Open(t.Context(), filepath.Join(t.TempDir(), "skilld.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// PostgresURL returns SKILLD_TEST_POSTGRES_URL. When it is unset: under
// CI=true the test fails; otherwise, with skip, the test is skipped with the
// reason, and without, "" is returned.
func PostgresURL(t testing.TB, skip bool) string {
	u := os.Getenv("SKILLD_TEST_POSTGRES_URL")
	if u != "" {
		return u
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("SKILLD_TEST_POSTGRES_URL is not set; CI requires PostgreSQL (./scripts/test starts one)")
	}
	if skip {
		t.Skip("SKILLD_TEST_POSTGRES_URL is not set; PostgreSQL tests skipped (./scripts/test starts a throwaway cluster when PostgreSQL is installed)")
	}
	return ""
}

var schemas atomic.Int64

// OpenPostgres creates an empty schema for one test, opens a migrated store
// whose connections use it, and drops the schema at the end.
func OpenPostgres(t testing.TB) *pgstore.Store {
	t.Helper()
	return OpenPostgresAt(t, FreshPostgresURL(t))
}

// OpenPostgresAt opens a migrated store at url (one from FreshPostgresURL
// or PostgresOutage), closed at the end of the test.
func OpenPostgresAt(t testing.TB, url string) *pgstore.Store {
	t.Helper()
	s, err := pgstore.Open(t.Context(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// FreshPostgresURL creates an empty schema and returns a URL whose
// connections use it; the schema is dropped at the end of the test.
func FreshPostgresURL(t testing.TB) string {
	t.Helper()
	base := PostgresURL(t, true)
	schema := fmt.Sprintf("t_%d_%d", time.Now().UnixNano(), schemas.Add(1))
	admin, err := pgx.Connect(t.Context(), base)
	if err != nil {
		t.Fatal(err)
	}
	// Extensions belong to the database, not a schema: pg_trgm goes to
	// public once, so dropping a test's schema never drops the extension
	// (and the indexes of every other test's schema with it). Another
	// test creating it at the same moment is fine.
	admin.Exec(t.Context(), "CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public")
	if _, err := admin.Exec(t.Context(), "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		admin.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		admin.Close(context.Background())
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// PlanCases are the list parameters whose query plans drivers check.
func PlanCases() []store.SkillListParams {
	yes := true
	return []store.SkillListParams{
		{WorkspaceID: "w"},
		{WorkspaceID: "w", SourceType: "github"},
		{WorkspaceID: "w", FromCatalog: &yes},
		{WorkspaceID: "w", Search: "pdf"},
		{WorkspaceID: "w", IncludeCatalog: true},
	}
}
