package skillcache_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/sandbox/skillcache"
)

func testPackage(t testing.TB) *pack.Package {
	t.Helper()
	pkg, err := pack.New([]pack.File{
		{Path: "SKILL.md", Data: []byte("---\nname: x\ndescription: y\n---\nbody\n")},
		{Path: "scripts/run.sh", Data: []byte("#!/bin/sh\necho original\n"), Exec: true},
		{Path: "data/a/b.txt", Data: []byte("nested")},
	}, pack.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return pkg
}

func open(t *testing.T, dir string) *skillcache.Cache {
	t.Helper()
	c, err := skillcache.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// checkCopy asserts dir holds exactly pkg's bytes and modes.
func checkCopy(t *testing.T, dir string, pkg *pack.Package) {
	t.Helper()
	for _, f := range pkg.Files() {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		b, err := os.ReadFile(p)
		if err != nil || string(b) != string(f.Data) {
			t.Errorf("%s: %q, %v", f.Path, b, err)
			continue
		}
		info, _ := os.Stat(p)
		want := os.FileMode(0o444)
		if f.Exec {
			want = 0o555
		}
		if info.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", f.Path, info.Mode().Perm(), want)
		}
	}
}

func TestFillAndReuse(t *testing.T) {
	pkg := testPackage(t)
	root := t.TempDir()
	c := open(t, root)
	dir, err := c.Dir(t.Context(), pkg)
	if err != nil {
		t.Fatal(err)
	}
	checkCopy(t, dir, pkg)
	var before syscall.Stat_t
	syscall.Stat(filepath.Join(dir, "SKILL.md"), &before)
	again, err := c.Dir(t.Context(), pkg)
	if err != nil || again != dir {
		t.Fatalf("second Dir: %q, %v", again, err)
	}
	var after syscall.Stat_t
	syscall.Stat(filepath.Join(dir, "SKILL.md"), &after)
	if before.Ino != after.Ino {
		t.Error("an intact copy was rebuilt")
	}
	if info, _ := os.Stat(root); info.Mode().Perm() != 0o700 {
		t.Errorf("cache folder mode %v, want 0700", info.Mode().Perm())
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 1 {
		t.Errorf("cache holds %d entries, want 1 (no temporary folders left)", len(entries))
	}
}

func TestConcurrentFill(t *testing.T) {
	pkg := testPackage(t)
	c := open(t, t.TempDir())
	dirs := make([]string, 8)
	var wg sync.WaitGroup
	for i := range dirs {
		wg.Go(func() {
			d, err := c.Dir(t.Context(), pkg)
			if err != nil {
				t.Error(err)
			}
			dirs[i] = d
		})
	}
	wg.Wait()
	for _, d := range dirs {
		if d == "" || d != dirs[0] {
			t.Fatalf("copies %q, want one", dirs)
		}
	}
	checkCopy(t, dirs[0], pkg)
}

// Caches of several processes may share a folder.
func TestSharedFolder(t *testing.T) {
	pkg := testPackage(t)
	root := t.TempDir()
	dirs := make([]string, 6)
	var wg sync.WaitGroup
	for i := range dirs {
		wg.Go(func() {
			d, err := open(t, root).Dir(t.Context(), pkg)
			if err != nil {
				t.Error(err)
			}
			dirs[i] = d
		})
	}
	wg.Wait()
	for _, d := range dirs {
		if d != dirs[0] {
			t.Fatalf("copies %q", dirs)
		}
	}
	checkCopy(t, dirs[0], pkg)
	if entries, _ := os.ReadDir(root); len(entries) != 1 {
		t.Errorf("%d entries left in the folder", len(entries))
	}
}

// Every way of changing a cached copy is caught, including a same-size
// write with the modification time set back (what size-and-mtime checks
// miss), and the next use gets the package's bytes again.
func TestTamperingIsCaught(t *testing.T) {
	run := filepath.Join("scripts", "run.sh")
	for name, tamper := range map[string]func(dir string) error{
		"same size, mtime restored": func(dir string) error {
			p := filepath.Join(dir, run)
			info, _ := os.Stat(p)
			os.Chmod(p, 0o755)
			payload := []byte("#!/bin/sh\necho PAYLOADX\n")[:info.Size()]
			if err := os.WriteFile(p, payload, 0o755); err != nil {
				return err
			}
			os.Chmod(p, 0o555)
			return os.Chtimes(p, info.ModTime(), info.ModTime())
		},
		"chmod": func(dir string) error { return os.Chmod(filepath.Join(dir, run), 0o777) },
		"file added": func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "scripts", "extra.sh"), []byte("x"), 0o755)
		},
		"file removed": func(dir string) error { return os.Remove(filepath.Join(dir, "data", "a", "b.txt")) },
		"replaced by a link": func(dir string) error {
			p := filepath.Join(dir, "SKILL.md")
			os.Remove(p)
			return os.Symlink("/etc/passwd", p)
		},
		"renamed": func(dir string) error {
			return os.Rename(filepath.Join(dir, "data", "a"), filepath.Join(dir, "data", "z"))
		},
	} {
		t.Run(name, func(t *testing.T) {
			pkg := testPackage(t)
			c := open(t, t.TempDir())
			dir, err := c.Dir(t.Context(), pkg)
			if err != nil {
				t.Fatal(err)
			}
			if err := tamper(dir); err != nil {
				t.Fatal(err)
			}
			again, err := c.Dir(t.Context(), pkg)
			if err != nil {
				t.Fatal(err)
			}
			checkCopy(t, again, pkg)
			if _, err := os.Lstat(filepath.Join(again, "scripts", "extra.sh")); err == nil {
				t.Error("an added file survived")
			}
		})
	}
}

// A copy this process did not fill is believed only after its content is
// checked: a tampered one left by an earlier process is rebuilt, an intact
// one is reused as it is.
func TestCopiesFromEarlierProcesses(t *testing.T) {
	pkg := testPackage(t)
	root := t.TempDir()
	dir, err := open(t, root).Dir(t.Context(), pkg)
	if err != nil {
		t.Fatal(err)
	}
	var ino syscall.Stat_t
	syscall.Stat(filepath.Join(dir, "SKILL.md"), &ino)
	if again, err := open(t, root).Dir(t.Context(), pkg); err != nil || again != dir {
		t.Fatalf("reopened: %q, %v", again, err)
	}
	var same syscall.Stat_t
	syscall.Stat(filepath.Join(dir, "SKILL.md"), &same)
	if same.Ino != ino.Ino {
		t.Error("an intact copy from an earlier process was rebuilt")
	}

	p := filepath.Join(dir, "scripts", "run.sh")
	os.Chmod(p, 0o755)
	os.WriteFile(p, []byte("#!/bin/sh\necho PAYLOADX\n"), 0o755)
	os.Chmod(p, 0o555)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(p, old, old)
	if _, err := open(t, root).Dir(t.Context(), pkg); err != nil {
		t.Fatal(err)
	}
	checkCopy(t, dir, pkg)
}

func BenchmarkDir(b *testing.B) {
	var files []pack.File
	for i := range 200 {
		files = append(files, pack.File{Path: fmt.Sprintf("d%d/f%03d.txt", i%10, i), Data: make([]byte, 5<<20/200)})
	}
	pkg, err := pack.New(files, pack.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("warm", func(b *testing.B) {
		c, _ := skillcache.New(b.TempDir())
		c.Dir(b.Context(), pkg)
		for b.Loop() {
			if _, err := c.Dir(b.Context(), pkg); err != nil {
				b.Fatal(err)
			}
		}
	})
}
