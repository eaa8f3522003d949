package sqldb

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestReadMigrations(t *testing.T) {
	ok := fstest.MapFS{
		"0002_more.sql": {Data: []byte("B")},
		"0001_init.sql": {Data: []byte("A")},
		"README.md":     {Data: []byte("ignored")},
	}
	ms, err := readMigrations(ok)
	if err != nil || len(ms) != 2 || ms[0].name != "init" || ms[1].sql != "B" {
		t.Fatalf("readMigrations = %+v, %v", ms, err)
	}
	for name, fsys := range map[string]fstest.MapFS{
		"gap":       {"0001_a.sql": {}, "0003_c.sql": {}},
		"duplicate": {"0001_a.sql": {}, "0001_b.sql": {}},
		"bad name":  {"init.sql": {}},
		"zero":      {"0000_a.sql": {}},
	} {
		if _, err := readMigrations(fsys); err == nil || !strings.Contains(err.Error(), "migration") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}
