package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skilld/skilld/pack"
)

// SkillCache keeps one materialized copy of each package on disk, by
// digest, and places it into task sandboxes with hard links: a second task
// activating the same package pays one link per file instead of writing
// every byte again. Cached files are read-only; write_file replaces files
// instead of writing into them, so a task cannot change the cached copy
// through its links, and a cached copy whose files changed anyway (size or
// modification time) is rebuilt before use.
type SkillCache struct {
	Dir string

	mu      sync.Mutex
	entries map[string]*cacheEntry
}

type cacheEntry struct {
	once  sync.Once
	dir   string
	stats map[string]fileStat
	err   error
}

type fileStat struct {
	size  int64
	mtime time.Time
}

// copyFrom returns the directory holding a verified copy of pkg, building
// it when missing or changed. An entry's fields are read only after its
// once has run (another task may be building it), and the check of an
// existing copy happens outside the lock, so activations of other packages
// do not wait on its file system calls.
func (c *SkillCache) copyFrom(pkg *pack.Package) (*cacheEntry, error) {
	digest := pkg.Digest()
	for {
		c.mu.Lock()
		if c.entries == nil {
			c.entries = map[string]*cacheEntry{}
		}
		e := c.entries[digest]
		if e == nil {
			e = &cacheEntry{}
			c.entries[digest] = e
		}
		c.mu.Unlock()
		built := false
		e.once.Do(func() { built, e.err = true, e.build(c.Dir, pkg) })
		if e.err == nil && (built || e.intact()) {
			return e, nil
		}
		c.mu.Lock()
		if c.entries[digest] == e {
			delete(c.entries, digest)
		}
		c.mu.Unlock()
		if e.err != nil {
			return e, e.err
		}
		// The cached copy changed: the next round builds a new one.
	}
}

func (e *cacheEntry) build(root string, pkg *pack.Package) error {
	name := strings.TrimPrefix(pkg.Digest(), "sha256:")
	e.dir = filepath.Join(root, name)
	os.RemoveAll(e.dir) // a leftover from a crash or a changed copy
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(root, ".tmp-")
	if err != nil {
		return err
	}
	if err := writeFiles(tmp, pkg, true); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	if err := os.Rename(tmp, e.dir); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	e.stats = map[string]fileStat{}
	for _, f := range pkg.Files() {
		info, err := os.Lstat(filepath.Join(e.dir, filepath.FromSlash(f.Path)))
		if err != nil {
			return err
		}
		e.stats[f.Path] = fileStat{info.Size(), info.ModTime()}
	}
	return nil
}

// intact reports whether no cached file changed since it was written.
func (e *cacheEntry) intact() bool {
	paths := make([]string, 0, len(e.stats))
	for p := range e.stats {
		paths = append(paths, p)
	}
	err := parallel(len(paths), func(i int) error {
		st := e.stats[paths[i]]
		info, err := os.Lstat(filepath.Join(e.dir, filepath.FromSlash(paths[i])))
		if err != nil || info.Size() != st.size || !info.ModTime().Equal(st.mtime) {
			return errChanged
		}
		return nil
	})
	return err == nil
}

var errChanged = errors.New("cached copy changed")

// parallel runs fn(0) … fn(n-1) on a few goroutines and returns the first
// error. It suits read-only system calls such as stat; creating files in
// one folder does not gain from it (the folder's lock serializes them).
func parallel(n int, fn func(i int) error) error {
	workers := min(n, 2*runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for i := range n {
			if err := fn(i); err != nil {
				return err
			}
		}
		return nil
	}
	var (
		next  atomic.Int64
		first atomic.Pointer[error]
		wg    sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n || first.Load() != nil {
					return
				}
				if err := fn(i); err != nil {
					first.CompareAndSwap(nil, &err)
					return
				}
			}
		})
	}
	wg.Wait()
	if p := first.Load(); p != nil {
		return *p
	}
	return nil
}

// mkdirs creates every folder the package's files need, once each.
func mkdirs(dir string, pkg *pack.Package) error {
	seen := map[string]bool{}
	for _, f := range pkg.Files() {
		d := filepath.Dir(filepath.FromSlash(f.Path))
		if d == "." || seen[d] {
			continue
		}
		seen[d] = true
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// writeFiles writes pkg's files under dir. readOnly marks them so for the
// cache.
func writeFiles(dir string, pkg *pack.Package, readOnly bool) error {
	if err := mkdirs(dir, pkg); err != nil {
		return err
	}
	// Sequential on purpose: creating files in one folder from several
	// goroutines contends on the folder's lock and measured 6× slower.
	for _, f := range pkg.Files() {
		mode := fs.FileMode(0o644)
		if f.Exec {
			mode = 0o755
		}
		if readOnly {
			mode &^= 0o222
		}
		fh, err := os.OpenFile(filepath.Join(dir, filepath.FromSlash(f.Path)), os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if err != nil {
			return err
		}
		_, err = fh.Write(f.Data)
		if err == nil {
			err = fh.Chmod(mode) // the open's mode is subject to the umask
		}
		if err := errors.Join(err, fh.Close()); err != nil {
			return err
		}
	}
	return nil
}

// materialize commits pkg into sandbox/rel atomically: the files are
// placed in a temporary folder next to it, which is renamed into place
// only when complete, so a failure leaves no partial skill folder. An
// existing folder is left as it is (activation is idempotent).
func materialize(ctx context.Context, cache *SkillCache, pkg *pack.Package, sandbox, rel string) error {
	root, err := os.OpenRoot(sandbox)
	if err != nil {
		return err
	}
	defer root.Close()
	parent := filepath.Dir(filepath.FromSlash(rel))
	// Creating the parent through the root refuses a "skills" that is a
	// link out of the sandbox.
	if err := root.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", parent, err)
	}
	final := filepath.Join(sandbox, filepath.FromSlash(rel))
	if _, err := os.Lstat(final); err == nil {
		return nil
	}
	var b [6]byte
	rand.Read(b[:])
	tmp := filepath.Join(sandbox, parent, ".tmp-"+hex.EncodeToString(b[:]))
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return err
	}
	if err := place(ctx, cache, pkg, tmp); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	if err := os.Rename(tmp, final); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	return nil
}

// place fills dir with pkg's files: hard links to the cached copy when
// there is a cache on the same file system, written copies otherwise.
func place(ctx context.Context, cache *SkillCache, pkg *pack.Package, dir string) error {
	if cache == nil {
		return writeFiles(dir, pkg, false)
	}
	e, err := cache.copyFrom(pkg)
	if err != nil {
		return writeFiles(dir, pkg, false)
	}
	if err := mkdirs(dir, pkg); err != nil {
		return err
	}
	for _, f := range pkg.Files() {
		if err = ctx.Err(); err != nil {
			return err
		}
		rel := filepath.FromSlash(f.Path)
		if err = os.Link(filepath.Join(e.dir, rel), filepath.Join(dir, rel)); err != nil {
			break
		}
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		// Another file system, or links not allowed: copy.
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		if err := os.Mkdir(dir, 0o755); err != nil {
			return err
		}
		return writeFiles(dir, pkg, false)
	}
	return err
}
