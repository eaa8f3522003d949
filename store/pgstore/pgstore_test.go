package pgstore_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/pgstore"
	"github.com/skilld/skilld/store/storetest"
)

// testURL returns the server named by SKILLD_TEST_POSTGRES_URL. Without it
// the tests skip with the reason, except under CI=true, where PostgreSQL is
// required and its absence is a failure.
func testURL(t testing.TB) string {
	u := os.Getenv("SKILLD_TEST_POSTGRES_URL")
	if u == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("SKILLD_TEST_POSTGRES_URL is not set; CI requires PostgreSQL (./scripts/test starts one)")
		}
		t.Skip("SKILLD_TEST_POSTGRES_URL is not set; PostgreSQL tests skipped (./scripts/test starts a throwaway cluster when PostgreSQL is installed)")
	}
	return u
}

var schemas atomic.Int64

// openFresh creates an empty schema for one test and opens a store whose
// connections use it, dropping the schema afterwards.
func openFresh(t testing.TB) *pgstore.Store {
	t.Helper()
	base := testURL(t)
	schema := fmt.Sprintf("t_%d_%d", time.Now().UnixNano(), schemas.Add(1))
	admin, err := pgx.Connect(t.Context(), base)
	if err != nil {
		t.Fatal(err)
	}
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
	s, err := pgstore.Open(t.Context(), u.String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openFresh(t) })
}

func TestOpenErrors(t *testing.T) {
	_, err := pgstore.Open(t.Context(), "postgres://u:hunter2@127.0.0.1:1/db?connect_timeout=1", nil)
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("unreachable server: %v", err)
	}
	_, err = pgstore.Open(t.Context(), "postgres://u:hunter2@[bad", nil)
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("bad URL: %v", err)
	}
}
