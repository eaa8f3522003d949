package rootfs_test

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/sandbox/rootfs"
)

// env is a test's folders: <base>/store (the store), <base>/outside (a
// folder with a file, secret, that hostile archives aim at; the store's
// temporary trees are <base>/store/.tmp-x/rootfs, so "../../../outside"
// from the top of a tree is this folder), and archives written to
// <base>/archives.
type env struct {
	base, dir, outside string
	store              *rootfs.Store
}

func newEnv(t *testing.T, lim rootfs.Limits) *env {
	t.Helper()
	base := t.TempDir()
	e := &env{base: base, dir: filepath.Join(base, "store"), outside: filepath.Join(base, "outside")}
	for _, d := range []string{e.outside, filepath.Join(base, "archives")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(e.outside, "secret"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := rootfs.Open(e.dir, lim)
	if err != nil {
		t.Fatal(err)
	}
	e.store = s
	t.Cleanup(func() { writable(e.dir) })
	return e
}

// writable gives the owner write access to every folder under dir, so
// that a test run by a user other than root can remove the images it made
// (their read-only folders, "ro" of threeLayers, stop os.RemoveAll).
func writable(dir string) {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
}

// archive writes b as an archive file and returns its path.
func (e *env) archive(t *testing.T, b []byte) string {
	t.Helper()
	f, err := os.CreateTemp(filepath.Join(e.base, "archives"), "*.tar")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}

func (e *env) unpack(t *testing.T, b []byte) (*rootfs.Root, error) {
	t.Helper()
	return e.store.Unpack(context.Background(), e.archive(t, b))
}

func (e *env) mustUnpack(t *testing.T, b []byte) *rootfs.Root {
	t.Helper()
	r, err := e.unpack(t, b)
	if err != nil {
		t.Fatalf("Unpack: %v", err)
	}
	return r
}

// refused unpacks b, expects an error of code whose message holds every
// one of want, and checks that nothing was left behind.
func (e *env) refused(t *testing.T, b []byte, code string, want ...string) error {
	t.Helper()
	r, err := e.unpack(t, b)
	if err == nil {
		t.Fatalf("Unpack succeeded (%s), want a %s error", r.Dir, code)
	}
	if got := skilld.ErrorCode(err); got != code {
		t.Errorf("code %q, want %q: %v", got, code, err)
	}
	msg := skilld.ErrorMessage(err)
	t.Logf("refused: %s", msg)
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("message %q does not say %q", msg, w)
		}
	}
	e.checkEmpty(t)
	e.checkOutside(t)
	return err
}

// checkEmpty checks that the store folder holds nothing.
func (e *env) checkEmpty(t *testing.T) {
	t.Helper()
	entries, err := os.ReadDir(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range entries {
		t.Errorf("left in the store: %s", d.Name())
	}
}

// checkOutside checks that the folder outside the store is as it was:
// secret alone, unchanged, with no second link.
func (e *env) checkOutside(t *testing.T) {
	t.Helper()
	if got := treeOf(t, e.outside); !maps.Equal(got, map[string]string{".": "d 0755", "secret": "f 0644 secret"}) {
		t.Errorf("the folder outside the store changed: %v", got)
	}
	fi, err := os.Lstat(filepath.Join(e.outside, "secret"))
	if err != nil {
		t.Fatal(err)
	}
	if n := fi.Sys().(*syscall.Stat_t).Nlink; n != 1 {
		t.Errorf("outside/secret has %d links", n)
	}
	entries, _ := os.ReadDir(e.base)
	for _, d := range entries {
		if n := d.Name(); n != "store" && n != "outside" && n != "archives" {
			t.Errorf("written next to the store: %s", n)
		}
	}
}

// treeOf describes every entry under dir: "d 0755" for a folder (with
// 1000 for sticky), "f 0644 <content>" for a file, "l <target>" for a
// link, "? <mode>" for anything else.
func treeOf(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		perm := fi.Mode().Perm()
		if fi.Mode()&fs.ModeSticky != 0 {
			perm |= 0o1000
		}
		switch {
		case fi.IsDir():
			out[rel] = fmt.Sprintf("d %04o", perm)
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid) != 0 {
				perm |= 0o6000
			}
			out[rel] = fmt.Sprintf("f %04o %s", perm, b)
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[rel] = "l " + target
		default:
			out[rel] = fmt.Sprintf("? %v", fi.Mode())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// diffTrees reports every difference between got and want.
func diffTrees(t *testing.T, got, want map[string]string) {
	t.Helper()
	var keys []string
	for k := range got {
		keys = append(keys, k)
	}
	for k := range want {
		if _, ok := got[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		g, gok := got[k]
		w, wok := want[k]
		switch {
		case !gok:
			t.Errorf("%s: missing, want %q", k, w)
		case !wok:
			t.Errorf("%s: unexpected %q", k, g)
		case g != w:
			t.Errorf("%s: %q, want %q", k, g, w)
		}
	}
}

// entriesOf lists the names in dir.
func entriesOf(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
