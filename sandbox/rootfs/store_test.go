package rootfs_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/sandbox/rootfs"
)

func smallImage(t *testing.T) []byte {
	return ociArchive(t,
		buildLayer(t, gz, dir("etc"), file("etc/os-release", "ID=test"), fileMode("bin/sh", "sh", 0o755)),
		buildLayer(t, zst, whiteout("etc/os-release"), file("etc/hostname", "sandbox")),
	)
}

func inode(t *testing.T, p string) uint64 {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

func TestOpenMakesAPrivateFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "store")
	if _, err := rootfs.Open(dir, rootfs.Limits{}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("store folder: %v %v, want mode 0700", fi.Mode(), err)
	}
}

// TestUnpackOnce: a second call, of this store or of another on the same
// folder, finds the image and unpacks nothing.
func TestUnpackOnce(t *testing.T) {
	e := newEnv(t, rootfs.Limits{})
	path := e.archive(t, smallImage(t))
	ctx := context.Background()
	r1, err := e.store.Unpack(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	diffTrees(t, treeOf(t, r1.Dir), map[string]string{
		".": "d 0755", "etc": "d 0755", "etc/hostname": "f 0644 sandbox", "bin": "d 0755", "bin/sh": "f 0755 sh",
	})
	hexSum := strings.TrimPrefix(r1.Digest, "sha256:")
	if got := entriesOf(t, e.dir); len(got) != 1 || got[0] != hexSum {
		t.Fatalf("store holds %v, want [%s]", got, hexSum)
	}
	if got := entriesOf(t, filepath.Join(e.dir, hexSum)); strings.Join(got, " ") != "rootfs unpacked.json" {
		t.Errorf("image folder holds %v", got)
	}
	ino := inode(t, filepath.Join(r1.Dir, "etc/hostname"))

	again, err := rootfs.Open(e.dir, rootfs.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*rootfs.Store{e.store, again} {
		r, err := s.Unpack(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if *r != *r1 {
			t.Errorf("got %+v, want %+v", r, r1)
		}
	}
	if inode(t, filepath.Join(r1.Dir, "etc/hostname")) != ino {
		t.Error("the image was unpacked again")
	}
}

// TestDamagedCopyReplaced: a folder without its marker (an interrupted
// rm -r, say) is not taken for the image.
func TestDamagedCopyReplaced(t *testing.T) {
	e := newEnv(t, rootfs.Limits{})
	b := smallImage(t)
	r := e.mustUnpack(t, b)
	if err := os.Remove(filepath.Join(filepath.Dir(r.Dir), "unpacked.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(r.Dir, "bin/sh")); err != nil {
		t.Fatal(err)
	}
	r2 := e.mustUnpack(t, b)
	if *r2 != *r {
		t.Errorf("got %+v, want %+v", r2, r)
	}
	if _, err := os.Stat(filepath.Join(r.Dir, "bin/sh")); err != nil {
		t.Errorf("the damaged copy was kept: %v", err)
	}
}

// TestConcurrentStores: two stores on one folder (two servers) and two
// callers of each unpack one archive at once: every call gets the one
// copy, and nothing else is left.
func TestConcurrentStores(t *testing.T) {
	for round := range 5 {
		e := newEnv(t, rootfs.Limits{})
		other, err := rootfs.Open(e.dir, rootfs.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		path := e.archive(t, ociArchive(t, threeLayers(t, gz, gz, zst)...))
		stores := []*rootfs.Store{e.store, other, e.store, other}
		roots := make([]*rootfs.Root, len(stores))
		errs := make([]error, len(stores))
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, s := range stores {
			wg.Go(func() {
				<-start
				roots[i], errs[i] = s.Unpack(context.Background(), path)
			})
		}
		close(start)
		wg.Wait()
		for i := range stores {
			if errs[i] != nil {
				t.Fatalf("round %d, caller %d: %v", round, i, errs[i])
			}
			if *roots[i] != *roots[0] {
				t.Errorf("round %d: caller %d got %+v, caller 0 %+v", round, i, roots[i], roots[0])
			}
		}
		if got := entriesOf(t, e.dir); len(got) != 1 {
			t.Errorf("round %d: store holds %v, want one image folder", round, got)
		}
		diffTrees(t, treeOf(t, roots[0].Dir), wantThree)
	}
}

// TestSweep: Open removes what a dead unpack left, and only that.
func TestSweep(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	old := time.Now().Add(-2 * time.Hour)
	mk := func(name string, lock bool, mtime time.Time) *os.File {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Join(p, "rootfs", "ro"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(p, "rootfs", "ro"), 0o555); err != nil {
			t.Fatal(err)
		}
		var f *os.File
		if lock {
			var err error
			if f, err = os.Create(filepath.Join(p, ".lock")); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return f
	}
	mk(".tmp-dead", false, old) // its process died before locking
	dead := mk(".tmp-unlocked", true, old)
	dead.Close()                        // its process died
	mk(".tmp-busy", true, old)          // a slow unpack in progress
	mk(".tmp-young", false, time.Now()) // just made: its lock comes next
	mk("0123", false, old)              // not a temporary folder
	if _, err := rootfs.Open(dir, rootfs.Limits{}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(entriesOf(t, dir), " "); got != ".tmp-busy .tmp-young 0123" {
		t.Errorf("store holds %q after the sweep", got)
	}
}

// countdown is a context cancelled after its Err has been asked n times:
// in the middle of an unpack, deterministically.
type countdown struct {
	context.Context
	n atomic.Int64
}

func (c *countdown) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

func TestCancelled(t *testing.T) {
	b := ociArchive(t,
		buildLayer(t, plain, file("a", "a"), zeros("big", 8<<20)),
		buildLayer(t, gz, file("b", "b")),
	)
	for _, n := range []int64{0, 3, 20} {
		e := newEnv(t, rootfs.Limits{})
		ctx := &countdown{Context: context.Background()}
		ctx.n.Store(n)
		_, err := e.store.Unpack(ctx, e.archive(t, b))
		if skilld.ErrorCode(err) != skilld.EUNAVAILABLE || !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled after %d checks: got %v (%s), want EUNAVAILABLE wrapping context.Canceled", n, err, skilld.ErrorCode(err))
		}
		e.checkEmpty(t)
	}
}
