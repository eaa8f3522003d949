package deps

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/sandbox/internal/hostfs"
)

// noFollow opens a regular file the walk found without following a link
// put there since.
const noFollow = syscall.O_NOFOLLOW

// staleTemp is the age past which a temporary folder in the store is a
// dead process's: no copy takes that long.
const staleTemp = 24 * time.Hour

// Bounds of one layer.
const (
	MaxLayerFiles = 200_000
	MaxLayerBytes = 4 << 30
)

// Store keeps built layers: <dir>/<key>/ (the tree) and <dir>/<key>.json
// (its manifest: each entry's path, type, mode, size and SHA-256, or link
// target), the manifest written last. A layer is checked against its
// manifest the first time a process uses it, so a damaged or half-written
// one is rebuilt, never used.
type Store struct {
	dir string
	max int64

	mu       sync.Mutex
	verified map[string]bool
}

// Open opens (creating, mode 0700) a store in dir that keeps at most max
// bytes of layers (0: no bound), the least recently used going first.
func Open(dir string, max int64) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("deps: %w", err)
	}
	// What a process that died while copying or removing left.
	left, _ := filepath.Glob(filepath.Join(dir, ".tmp-*"))
	for _, t := range left {
		if info, err := os.Lstat(t); err == nil && time.Since(info.ModTime()) > staleTemp {
			hostfs.RemoveAll(t)
		}
	}
	return &Store{dir: dir, max: max, verified: map[string]bool{}}, nil
}

// entry is one line of a manifest.
type entry struct {
	Path   string      `json:"path"`
	Mode   fs.FileMode `json:"mode"`
	Size   int64       `json:"size,omitempty"`
	SHA256 string      `json:"sha256,omitempty"`
	Link   string      `json:"link,omitempty"`
}

type manifest struct {
	Entries []entry `json:"entries"`
	Bytes   int64   `json:"bytes"`
}

// Layer is a layer in use. While it is open no process sharing the store
// evicts it: eviction deletes files, which a sandbox that binds the layer
// would see go mid-command.
type Layer struct {
	// Dir is the layer's folder.
	Dir string
	// lease is the layer's manifest, held with a shared lock.
	lease *os.File
}

// Close ends the use.
func (l *Layer) Close() error {
	if l == nil || l.lease == nil {
		return nil
	}
	return l.lease.Close()
}

// lease opens the manifest of key and takes a shared lock on it, which
// eviction (an exclusive lock, tried without waiting) respects. A manifest
// removed meanwhile is no lease.
func (s *Store) lease(key string) (*Layer, error) {
	f, err := os.Open(filepath.Join(s.dir, key+".json"))
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
		f.Close()
		return nil, err
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil || st.Nlink == 0 {
		f.Close()
		return nil, os.ErrNotExist
	}
	return &Layer{Dir: filepath.Join(s.dir, key), lease: f}, nil
}

// Get returns the layer key, in use until the caller closes it, checked
// against its manifest the first time this process uses it, and marks it
// used. A layer that does not match is removed, and Get reports it
// missing.
func (s *Store) Get(key string) (*Layer, bool) {
	l, err := s.lease(key)
	if err != nil {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.verified[key] {
		// Only the first use reads the manifest, which for a large layer
		// is megabytes.
		var m manifest
		b, err := io.ReadAll(l.lease)
		if err != nil || json.Unmarshal(b, &m) != nil || verify(l.Dir, m) != nil {
			// Damaged: of no use to anyone, in use or not.
			l.Close()
			if unlock, err := s.exclusive(); err == nil {
				s.discard(key)
				unlock()
			}
			return nil, false
		}
		s.verified[key] = true
	}
	now := time.Now()
	os.Chtimes(l.Dir+".json", now, now)
	return l, true
}

// Put copies the tree at built (what an install in a sandbox left: nothing
// in it is followed) into the store as the layer key and returns it, in
// use. Links stay links; devices, FIFOs and sockets are dropped, and so
// are set-uid and set-gid bits. When another process put the layer first,
// that one is returned.
func (s *Store) Put(key, built string) (*Layer, error) {
	var b [6]byte
	rand.Read(b[:])
	tmp := filepath.Join(s.dir, ".tmp-"+hex.EncodeToString(b[:]))
	m, err := copyTree(built, tmp)
	if err != nil {
		hostfs.RemoveAll(tmp)
		return nil, err
	}
	dir := filepath.Join(s.dir, key)
	s.mu.Lock()
	defer s.mu.Unlock()
	unlock, err := s.exclusive()
	if err != nil {
		hostfs.RemoveAll(tmp)
		return nil, err
	}
	defer unlock()
	if l, err := s.lease(key); err == nil {
		hostfs.RemoveAll(tmp)
		return l, nil
	}
	// A folder without a manifest is a put that died half-way (a live
	// one holds the store's lock): nobody can be using it.
	hostfs.RemoveAll(dir)
	if err := os.Rename(tmp, dir); err != nil {
		hostfs.RemoveAll(tmp)
		return nil, fmt.Errorf("deps: %w", err)
	}
	// The manifest is written whole, then renamed into place: a reader
	// sees none or all of it.
	js, _ := json.Marshal(m)
	if err := os.WriteFile(tmp+".json", js, 0o600); err != nil {
		os.Remove(tmp + ".json")
		hostfs.RemoveAll(dir)
		return nil, fmt.Errorf("deps: %w", err)
	}
	if err := os.Rename(tmp+".json", dir+".json"); err != nil {
		os.Remove(tmp + ".json")
		hostfs.RemoveAll(dir)
		return nil, fmt.Errorf("deps: %w", err)
	}
	l, err := s.lease(key)
	if err != nil {
		return nil, fmt.Errorf("deps: %w", err)
	}
	s.verified[key] = true
	s.evict(key)
	return l, nil
}

// evict removes the least recently used layers nobody uses, other than
// keep, while the store holds more than its bound.
func (s *Store) evict(keep string) {
	if s.max <= 0 {
		return
	}
	type layer struct {
		key   string
		bytes int64
		used  time.Time
	}
	var layers []layer
	var total int64
	entries, _ := os.ReadDir(s.dir)
	for _, e := range entries {
		key, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || strings.HasPrefix(key, ".tmp-") {
			continue
		}
		info, err1 := e.Info()
		b, err2 := os.ReadFile(filepath.Join(s.dir, e.Name()))
		var m manifest
		if err1 != nil || err2 != nil || json.Unmarshal(b, &m) != nil {
			continue
		}
		layers = append(layers, layer{key, m.Bytes, info.ModTime()})
		total += m.Bytes
	}
	slices.SortFunc(layers, func(a, b layer) int { return a.used.Compare(b.used) })
	for _, l := range layers {
		if total <= s.max {
			return
		}
		if l.key != keep && s.remove(l.key) {
			total -= l.bytes
		}
	}
}

// exclusive takes the lock that every process sharing the store holds
// while it puts or removes a layer, so that a removal never takes away a
// folder another process has just put.
func (s *Store) exclusive() (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(s.dir, ".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("deps: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("deps: locking the store: %w", err)
	}
	return func() { f.Close() }, nil
}

// remove deletes the layer key unless a process uses it; the caller holds
// the store's lock.
func (s *Store) remove(key string) bool {
	f, err := os.Open(filepath.Join(s.dir, key+".json"))
	if err != nil {
		return false
	}
	defer f.Close()
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return false
	}
	s.discard(key)
	return true
}

// discard removes the layer key (the caller holds the store's lock): its
// manifest first (nobody starts using it after that), then its folder,
// moved aside first so that nothing half-removed is ever under its name.
func (s *Store) discard(key string) {
	os.Remove(filepath.Join(s.dir, key+".json"))
	delete(s.verified, key)
	var b [6]byte
	rand.Read(b[:])
	gone := filepath.Join(s.dir, ".tmp-"+hex.EncodeToString(b[:]))
	if os.Rename(filepath.Join(s.dir, key), gone) == nil {
		hostfs.RemoveAll(gone)
	}
}

// copyTree copies src into dst (which must not exist) through roots, so
// that no link in src is followed, and returns the copy's manifest.
func copyTree(src, dst string) (manifest, error) {
	var m manifest
	in, err := os.OpenRoot(src)
	if err != nil {
		return m, fmt.Errorf("deps: the install left nothing: %w", err)
	}
	defer in.Close()
	if err := os.Mkdir(dst, 0o755); err != nil {
		return m, err
	}
	out, err := os.OpenRoot(dst)
	if err != nil {
		return m, err
	}
	defer out.Close()
	err = fs.WalkDir(in.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return err
		}
		if len(m.Entries) >= MaxLayerFiles {
			return skilld.Errorf(skilld.ETOOLARGE, "the installed packages hold more than %d files", MaxLayerFiles)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		e := entry{Path: p, Mode: info.Mode() &^ (fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)}
		switch {
		case info.IsDir():
			e.Mode = fs.ModeDir | 0o755
			if err := out.Mkdir(p, 0o755); err != nil {
				return err
			}
		case info.Mode()&fs.ModeSymlink != 0:
			if e.Link, err = in.Readlink(p); err != nil {
				return err
			}
			if err := out.Symlink(e.Link, p); err != nil {
				return err
			}
		case info.Mode().IsRegular():
			e.Mode = info.Mode().Perm()&0o755 | 0o444
			if e.Size, e.SHA256, err = copyFile(in, out, p, e.Mode); err != nil {
				return err
			}
			if m.Bytes += e.Size; m.Bytes > MaxLayerBytes {
				return skilld.Errorf(skilld.ETOOLARGE, "the installed packages are larger than %d bytes", MaxLayerBytes)
			}
		default:
			return nil // devices, FIFOs and sockets stay behind
		}
		m.Entries = append(m.Entries, e)
		return nil
	})
	return m, err
}

func copyFile(in, out *os.Root, p string, mode fs.FileMode) (int64, string, error) {
	r, err := in.OpenFile(p, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return 0, "", err
	}
	defer r.Close()
	w, err := out.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return 0, "", err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(w, h), r)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = out.Chmod(p, mode) // the umask took bits off
	}
	return n, hex.EncodeToString(h.Sum(nil)), err
}

// verify checks the tree at dir against m: exactly its entries, with their
// modes, sizes, contents and link targets.
func verify(dir string, m manifest) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	want := make(map[string]entry, len(m.Entries))
	for _, e := range m.Entries {
		want[e.Path] = e
	}
	seen := 0
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return err
		}
		e, ok := want[p]
		if !ok {
			return fmt.Errorf("%s is not in the manifest", p)
		}
		seen++
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case info.Mode() != e.Mode:
			return fmt.Errorf("%s has mode %v, not %v", p, info.Mode(), e.Mode)
		case e.Link != "":
			if l, err := root.Readlink(p); err != nil || l != e.Link {
				return fmt.Errorf("%s leads elsewhere", p)
			}
		case info.Mode().IsRegular():
			f, err := root.OpenFile(p, os.O_RDONLY|noFollow, 0)
			if err != nil {
				return err
			}
			h := sha256.New()
			n, err := io.Copy(h, f)
			f.Close()
			if err != nil || n != e.Size || hex.EncodeToString(h.Sum(nil)) != e.SHA256 {
				return fmt.Errorf("%s differs from the manifest", p)
			}
		}
		return nil
	})
	if err == nil && seen != len(want) {
		err = errors.New("entries of the manifest are missing")
	}
	return err
}
