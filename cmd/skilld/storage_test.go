package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMissingDataDirRefused: the commands that use a server's existing
// storage refuse a data dir that does not exist, or has no database,
// naming the flags that choose it, and create nothing. (serve and migrate
// create the storage on purpose.)
func TestMissingDataDirRefused(t *testing.T) {
	t.Setenv("SKILLD_DATA", "")
	t.Setenv("SKILLD_DB", "")
	t.Setenv("SKILLD_BLOBS", "")
	const token = "skd_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	commands := map[string][]string{
		"mcp":                 {"mcp", "--token", token},
		"mcp without a token": {"mcp"},
		"fsck":                {"fsck"},
		"run":                 {"run", "--agent", "helper", "--model", "openai:gpt-4o-mini", "hello"},
		"worker":              {"worker", "--temporal", "127.0.0.1:1", "--sandbox", "unsafe-host"},
	}
	for name, args := range commands {
		t.Run(name, func(t *testing.T) {
			for _, tc := range []struct {
				name  string
				setup func(dir string) []string
			}{
				{"default data dir in the working folder", func(dir string) []string { t.Chdir(dir); return nil }},
				{"--data that does not exist", func(dir string) []string { return []string{"--data", filepath.Join(dir, "nope")} }},
				{"--data without a database", func(dir string) []string {
					data := filepath.Join(dir, "empty")
					if err := os.Mkdir(data, 0o755); err != nil {
						t.Fatal(err)
					}
					return []string{"--data", data}
				}},
				{"--db naming no file", func(dir string) []string {
					return []string{"--data", dir, "--db", "sqlite://" + filepath.Join(dir, "other", "x.db")}
				}},
			} {
				t.Run(tc.name, func(t *testing.T) {
					dir := t.TempDir()
					extra := tc.setup(dir)
					before := listTree(t, dir)
					code, _, errOut := runCLI(t, append(append([]string{}, args[:1]...), append(extra, args[1:]...)...)...)
					if code == exitOK || !strings.Contains(errOut, "--data") || !strings.Contains(errOut, "--db") {
						t.Errorf("exit %d, want a failure naming --data and --db: %s", code, errOut)
					}
					if after := listTree(t, dir); strings.Join(after, "\n") != strings.Join(before, "\n") {
						t.Errorf("the command created files: before %q, after %q", before, after)
					}
				})
			}
		})
	}
}

// listTree lists every path under dir.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		out = append(out, p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// migratedDataDir returns a data dir holding a new, empty skilld
// database, made by skilld migrate.
func migratedDataDir(t *testing.T) string {
	t.Helper()
	data := t.TempDir()
	if code, out, errOut := runCLI(t, "migrate", "--data", data); code != exitOK {
		t.Fatalf("migrate: exit %d\n%s%s", code, out, errOut)
	}
	return data
}
