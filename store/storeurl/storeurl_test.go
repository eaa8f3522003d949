package storeurl_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/storetest"
	"github.com/skilld/skilld/store/storeurl"
)

func TestOpenSQLite(t *testing.T) {
	dir := t.TempDir()
	abs := filepath.Join(dir, "a", "skilld.db")
	s, err := storeurl.Open(t.Context(), "sqlite://"+abs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.WorkspaceCreate(t.Context(), &store.WorkspaceCreateParams{Name: "x"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := os.Stat(abs); err != nil {
		t.Fatalf("database file not at %s: %v", abs, err)
	}
	t.Chdir(dir)
	s, err = storeurl.Open(t.Context(), "sqlite:a/skilld.db", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.WorkspaceGet(t.Context(), &store.WorkspaceGetParams{Name: "x"}); err != nil {
		t.Errorf("relative path opened another database: %v", err)
	}
}

func TestOpenPostgres(t *testing.T) {
	s, err := storeurl.Open(t.Context(), storetest.FreshPostgresURL(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.WorkspaceCreate(t.Context(), &store.WorkspaceCreateParams{Name: "x"}); err != nil {
		t.Fatal(err)
	}
}

func TestOpenBadURLs(t *testing.T) {
	for _, tt := range []struct{ url, want string }{
		{"", "no scheme"},
		{"/var/lib/skilld.db", "no scheme"},
		{"mysql://h/db", `unknown scheme "mysql"`},
		{"sqlite://remote.host/x.db", "names host"},
		{"sqlite:///x.db?cache=shared", "only a path"},
		{"sqlite://", "no file path"},
		{"sqlite:", "no file path"},
		{"postgres://u:pw@[::1", "bad database URL"},
	} {
		_, err := storeurl.Open(t.Context(), tt.url, nil)
		if skilld.ErrorCode(err) != skilld.EINVALID || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Open(%q) = %v, want EINVALID containing %q", tt.url, err, tt.want)
		}
	}
}
