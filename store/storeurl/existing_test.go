package storeurl_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/storetest"
	"github.com/skilld/skilld/store/storeurl"
)

// TestOpenExistingRefusesWhatIsNotThere: a SQLite path with no file, a
// folder or an empty file is refused as ENOTFOUND wrapping ErrNoDatabase,
// and nothing is created; a database skilld made opens.
func TestOpenExistingRefusesWhatIsNotThere(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ name, path, want string }{
		{"missing file", filepath.Join(dir, "missing", "skilld.db"), "no database file at"},
		{"folder", dir, "is a folder"},
		{"empty file", empty, "is empty"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := entries(t, dir)
			_, err := storeurl.OpenExisting(t.Context(), "sqlite://"+tt.path, nil)
			if skilld.ErrorCode(err) != skilld.ENOTFOUND || !errors.Is(err, storeurl.ErrNoDatabase) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("OpenExisting = %v, want ENOTFOUND ErrNoDatabase containing %q", err, tt.want)
			}
			if after := entries(t, dir); after != before {
				t.Errorf("files changed: before %s, after %s", before, after)
			}
		})
	}
	made := filepath.Join(dir, "made.db")
	s, err := storeurl.Open(t.Context(), "sqlite://"+made, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.WorkspaceCreate(t.Context(), &store.WorkspaceCreateParams{Name: "x"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = storeurl.OpenExisting(t.Context(), "sqlite://"+made, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.WorkspaceGet(t.Context(), &store.WorkspaceGetParams{Name: "x"}); err != nil {
		t.Errorf("the existing database: %v", err)
	}
}

// TestOpenExistingPostgres: a PostgreSQL schema skilld never migrated is
// refused; once migrated, it opens.
func TestOpenExistingPostgres(t *testing.T) {
	url := storetest.FreshPostgresURL(t)
	_, err := storeurl.OpenExisting(t.Context(), url, nil)
	if skilld.ErrorCode(err) != skilld.ENOTFOUND || !errors.Is(err, storeurl.ErrNoDatabase) || !strings.Contains(err.Error(), "never set up by skilld") {
		t.Fatalf("an empty schema: %v", err)
	}
	s, err := storeurl.Open(t.Context(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = storeurl.OpenExisting(t.Context(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}

func entries(t *testing.T, dir string) string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			info, ierr := d.Info()
			if ierr != nil {
				return ierr
			}
			p += "@" + info.ModTime().String()
		}
		out = append(out, p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, ",")
}
