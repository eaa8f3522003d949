package sqlitestore_test

import (
	"path/filepath"
	"testing"

	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/sqlitestore"
	"github.com/skilld/skilld/store/storetest"
)

func openTemp(t testing.TB) *sqlitestore.Store {
	t.Helper()
	s, err := sqlitestore.Open(t.Context(), filepath.Join(t.TempDir(), "skilld.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openTemp(t) })
}
