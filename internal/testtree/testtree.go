// Package testtree reads folders for tests that compare what was written
// with what was meant, file modes included.
package testtree

import (
	"os"
	"path/filepath"
	"testing"
)

// Read lists the regular files under dir as path → content, with "*"
// after the paths of executables; other kinds of files fail the test.
func Read(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			t.Errorf("%s is not a regular file", p)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if info.Mode().Perm()&0o111 != 0 {
			rel += "*"
		}
		out[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
