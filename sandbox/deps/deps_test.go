package deps

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/skilld/skilld/pack"
)

func pkgOf(t *testing.T, files ...string) *pack.Package {
	t.Helper()
	var fs []pack.File
	for _, f := range append([]string{"SKILL.md"}, files...) {
		fs = append(fs, pack.File{Path: f, Data: []byte("x\n")})
	}
	p, err := pack.New(fs, pack.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestNeeds(t *testing.T) {
	for _, c := range []struct {
		files []string
		want  string
	}{
		{nil, ""},
		{[]string{"requirements.txt"}, "python"},
		{[]string{"package.json"}, ""}, // no lockfile: an install would float
		{[]string{"package.json", "package-lock.json"}, "node"},
		{[]string{"package.json", "npm-shrinkwrap.json", "requirements.txt"}, "python node"},
		{[]string{"scripts/requirements.txt"}, ""},
	} {
		var got []string
		for _, k := range Needs(pkgOf(t, c.files...)) {
			got = append(got, string(k))
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("%q: %q, want %q", c.files, got, c.want)
		}
	}
}

func TestIndexesAndKey(t *testing.T) {
	ix := Indexes{Python: "http://127.0.0.1:8080/simple", NPM: "https://npm.example.com/"}
	if err := ix.Check(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ix.Hosts([]Kind{Python, Node}), " "); got != "127.0.0.1:8080 npm.example.com" {
		t.Errorf("Hosts = %q", got)
	}
	if got := strings.Join((Indexes{}).Hosts([]Kind{Python, Node}), " "); got != "pypi.org files.pythonhosted.org registry.npmjs.org" {
		t.Errorf("default Hosts = %q", got)
	}
	for _, bad := range []Indexes{{Python: "ftp://x"}, {NPM: "registry"}, {Python: "http://"}} {
		if bad.Check() == nil {
			t.Errorf("Check(%+v) passed", bad)
		}
	}
	k := Key("sha256:a", "host", []Kind{Python}, ix)
	if k != Key("sha256:a", "host", []Kind{Python}, ix) || k == Key("sha256:a", "tree-sha256:b", []Kind{Python}, ix) || k == Key("sha256:a", "host", []Kind{Python}, Indexes{}) {
		t.Error("a key does not follow its inputs")
	}
	s := Script("skills/x-1", []Kind{Python, Node}, ix)
	for _, want := range []string{"pip install", "--index-url 'http://127.0.0.1:8080/simple'", "--trusted-host '127.0.0.1'", "--target /workspace/out/python", "npm ci", "--registry 'https://npm.example.com/'", "--no-bin-links"} {
		if !strings.Contains(s, want) {
			t.Errorf("the script lacks %q:\n%s", want, s)
		}
	}
}

// TestStore: a layer is copied without following links, devices and
// set-uid bits left behind; found again; a damaged one is not used; the
// least recently used go past the bound.
func TestStore(t *testing.T) {
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("host secret"), 0o600)
	built := t.TempDir()
	os.MkdirAll(filepath.Join(built, "python", "pkg"), 0o755)
	os.WriteFile(filepath.Join(built, "python", "pkg", "__init__.py"), []byte("VALUE = 1\n"), 0o644)
	os.WriteFile(filepath.Join(built, "python", "tool"), []byte("#!/bin/sh\n"), 0o4755)
	os.Symlink(filepath.Join(outside, "secret"), filepath.Join(built, "python", "out-link"))
	os.Symlink(outside, filepath.Join(built, "python", "out-dir"))
	syscall.Mkfifo(filepath.Join(built, "python", "fifo"), 0o644)
	s, err := Open(filepath.Join(t.TempDir(), "deps"), 0)
	if err != nil {
		t.Fatal(err)
	}
	l1, err := s.Put("k1", built)
	if err != nil {
		t.Fatal(err)
	}
	l1.Close()
	dir := l1.Dir
	if b, _ := os.ReadFile(filepath.Join(dir, "python", "pkg", "__init__.py")); string(b) != "VALUE = 1\n" {
		t.Errorf("copied %q", b)
	}
	if info, _ := os.Lstat(filepath.Join(dir, "python", "tool")); info.Mode() != 0o755 {
		t.Errorf("tool mode %v", info.Mode())
	}
	if l, err := os.Readlink(filepath.Join(dir, "python", "out-link")); err != nil || l != filepath.Join(outside, "secret") {
		t.Errorf("a link was not kept as a link: %q %v", l, err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "python", "out-dir", "secret")); err == nil {
		if info, _ := os.Lstat(filepath.Join(dir, "python", "out-dir")); info.Mode()&os.ModeSymlink == 0 {
			t.Error("a link to a folder was followed")
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "python", "fifo")); err == nil {
		t.Error("a FIFO was copied")
	}
	s2, _ := Open(s.dir, 0) // another process: verifies first
	if got, ok := s2.Get("k1"); !ok || got.Dir != dir {
		t.Errorf("Get = %v, %v", got, ok)
	} else {
		got.Close()
	}
	os.WriteFile(filepath.Join(dir, "python", "pkg", "__init__.py"), []byte("VALUE = 2\n"), 0o644)
	s3, _ := Open(s.dir, 0)
	if _, ok := s3.Get("k1"); ok {
		t.Error("a damaged layer was used")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the damaged layer is still there: %v", err)
	}

	small, _ := Open(filepath.Join(t.TempDir(), "small"), 25)
	put := func(k string) {
		d := t.TempDir()
		os.WriteFile(filepath.Join(d, "f"), []byte(strings.Repeat("x", 10)), 0o644)
		l, err := small.Put(k, d)
		if err != nil {
			t.Fatal(err)
		}
		l.Close()
	}
	has := func(s *Store, k string) bool {
		l, ok := s.Get(k)
		l.Close()
		return ok
	}
	put("a")
	put("b")
	time.Sleep(10 * time.Millisecond)
	has(small, "a") // used after b: b is the least recently used
	put("c")
	if a, b, c := has(small, "a"), has(small, "b"), has(small, "c"); !a || b || !c {
		t.Errorf("after eviction: a %v, b %v, c %v", a, b, c)
	}

	// A layer in use stays, whichever process wants the room; once
	// closed, it goes first.
	other, _ := Open(small.dir, 25)
	inUse, ok := other.Get("a")
	if !ok {
		t.Fatal("a is gone")
	}
	time.Sleep(10 * time.Millisecond)
	has(small, "c")
	put("d")
	if _, err := os.Stat(filepath.Join(inUse.Dir, "f")); err != nil {
		t.Errorf("a layer in use was evicted: %v", err)
	}
	inUse.Close()
	put("e")
	if has(small, "a") {
		t.Error("the least recently used layer stayed once nobody used it")
	}
	if _, err := s.Put("k2", filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing install made a layer")
	}
	if left, _ := filepath.Glob(filepath.Join(s.dir, ".tmp-*")); len(left) != 0 {
		t.Errorf("temporary folders left: %q", left)
	}
}

// Processes sharing a store put the same layers at once: each gets a whole
// layer, and what is left matches its manifest.
func TestStoreConcurrentPuts(t *testing.T) {
	built := t.TempDir()
	for i := range 50 {
		os.WriteFile(filepath.Join(built, fmt.Sprint("f", i)), []byte(strings.Repeat("x", i)), 0o644)
	}
	dir := filepath.Join(t.TempDir(), "deps")
	var stores []*Store
	for range 4 { // four processes: their own lock descriptors
		s, _ := Open(dir, 0)
		stores = append(stores, s)
	}
	for round := range 40 {
		key := fmt.Sprint("k", round)
		var wg sync.WaitGroup
		errs := make([]error, len(stores))
		for i, s := range stores {
			wg.Go(func() {
				l, err := s.Put(key, built)
				if err == nil {
					_, err = os.Stat(filepath.Join(l.Dir, "f49"))
					l.Close()
				}
				errs[i] = err
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		fresh, _ := Open(dir, 0)
		l, ok := fresh.Get(key)
		if !ok {
			t.Fatalf("round %d: the layer left does not match its manifest", round)
		}
		l.Close()
	}
}
