// Package skillcache keeps one read-only copy of each skill package on disk,
// by digest, for providers that place skills by mounting a folder (bwrap
// binds it read-only into every sandbox that activates the skill, so a warm
// placement writes nothing).
//
// What makes it safe to share across tasks and workspaces is verification
// by content, never by size and modification time: a copy is checked
// against the package's manifest (every path, size, executable bit and
// SHA-256, and no extra entry) when it is filled and the first time this
// process uses a copy it did not fill. Afterwards each use compares every
// file's and folder's device, inode, mode, size, modification time and
// change time with what was recorded at verification; the change time moves
// on any write, chmod, rename or link of an inode and cannot be set back by
// an unprivileged caller, so a copy altered by any means fails the check,
// is verified by content again and, when it differs, rebuilt.
package skillcache

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/sandbox/internal/hostfs"
	"golang.org/x/sys/unix"
)

// Cache is a folder of verified package copies. It is safe for concurrent
// use, and several processes may share a folder (a server and `skilld run`,
// say): a copy appears only by the rename of a complete folder, and a copy
// another process made is verified by content before its first use here.
type Cache struct {
	dir string

	mu      sync.Mutex
	entries map[string]*entry
}

type entry struct {
	mu       sync.Mutex
	verified bool
	stamps   map[string]stamp // relative path ("." for the top) → stamp
}

// stamp is what a stat says about an inode that a change would move.
type stamp struct {
	dev, ino     uint64
	mode         uint32
	size         int64
	mtime, ctime unix.Timespec
}

// New opens (creating it with mode 0700) the cache folder dir.
func New(dir string) (*Cache, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("skill cache: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("skill cache: %w", err)
	}
	return &Cache{dir: dir, entries: map[string]*entry{}}, nil
}

// Dir returns the folder holding a verified copy of pkg, filling it when
// missing and rebuilding it when it no longer matches the package.
func (c *Cache) Dir(ctx context.Context, pkg *pack.Package) (string, error) {
	digest := pkg.Digest()
	c.mu.Lock()
	e := c.entries[digest]
	if e == nil {
		e = &entry{}
		c.entries[digest] = e
	}
	c.mu.Unlock()

	final := filepath.Join(c.dir, strings.TrimPrefix(digest, "sha256:"))
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.verified {
		if e.unchanged(final) {
			return final, nil
		}
		e.verified = false
	}
	if _, err := os.Lstat(final); err == nil {
		// Filled by an earlier process, or changed since it was verified:
		// believe only its content.
		if verify(final, pkg) == nil {
			return final, e.record(final)
		}
		if err := hostfs.RemoveAll(final); err != nil {
			return "", fmt.Errorf("skill cache: removing a damaged copy of %s: %w", digest, err)
		}
	}
	if err := c.fill(ctx, pkg, final); err != nil {
		return "", err
	}
	return final, e.record(final)
}

// fill writes pkg into a new temporary folder, verifies what landed on disk
// and renames it into place, so a copy is either complete and checked or
// absent.
func (c *Cache) fill(ctx context.Context, pkg *pack.Package, final string) error {
	var b [8]byte
	rand.Read(b[:])
	tmp := filepath.Join(c.dir, ".fill-"+hex.EncodeToString(b[:]))
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return fmt.Errorf("skill cache: %w", err)
	}
	// Readable by the user commands run as, who see it through a mount;
	// the cache folder above stays 0700.
	err := os.Chmod(tmp, 0o755)
	if err == nil {
		err = WriteFiles(ctx, tmp, pkg, true)
	}
	if err == nil {
		err = verify(tmp, pkg)
	}
	if err == nil {
		err = os.Rename(tmp, final)
		if _, serr := os.Lstat(final); err != nil && serr == nil {
			// Another process sharing the folder filled it first: its
			// copy serves once checked.
			hostfs.RemoveAll(tmp)
			return verify(final, pkg)
		}
	}
	if err != nil {
		hostfs.RemoveAll(tmp)
		return fmt.Errorf("skill cache: placing %s: %w", pkg.Digest(), err)
	}
	return nil
}

// WriteFiles writes pkg's files under dir (which exists): folders 0755,
// files 0644 or 0755 for executables, or without write bits when readOnly.
// (Folders keep their write bit so that an operator can remove a cache
// with rm -r; tasks never see a cached copy except through a read-only
// mount.)
// Files are written one after another: creating files in one folder from
// several goroutines contends on the folder's lock and measured slower.
func WriteFiles(ctx context.Context, dir string, pkg *pack.Package, readOnly bool) error {
	made := map[string]bool{}
	for _, f := range pkg.Files() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if d := path.Dir(f.Path); d != "." && !made[d] {
			if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(d)), 0o755); err != nil {
				return err
			}
			made[d] = true
		}
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

// errMismatch says a copy on disk is not the package.
var errMismatch = errors.New("the copy differs from its package")

// verify checks the folder dir against pkg's manifest: exactly the
// package's paths, each a regular read-only file with the package's size,
// executable bit and SHA-256, and nothing else (no links, no extra files).
func verify(dir string, pkg *pack.Package) error {
	want := map[string]pack.Entry{}
	for _, e := range pkg.Entries() {
		want[e.Path] = e
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer r.Close()
	seen := 0
	err = fs.WalkDir(r.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		e, ok := want[p]
		if !ok || !d.Type().IsRegular() {
			return fmt.Errorf("%w: unexpected %s", errMismatch, p)
		}
		seen++
		return checkFile(r, e)
	})
	if err == nil && seen != len(want) {
		err = fmt.Errorf("%w: %d of %d files present", errMismatch, seen, len(want))
	}
	return err
}

func checkFile(r *os.Root, e pack.Entry) error {
	f, err := r.Open(e.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	mode := fs.FileMode(0o444)
	if e.Exec {
		mode = 0o555
	}
	if !info.Mode().IsRegular() || info.Size() != e.Size || info.Mode().Perm() != mode {
		return fmt.Errorf("%w: %s", errMismatch, e.Path)
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	if "sha256:"+hex.EncodeToString(h.Sum(nil)) != e.Digest {
		return fmt.Errorf("%w: %s", errMismatch, e.Path)
	}
	return nil
}

// record stamps every inode of a verified copy.
func (e *entry) record(dir string) error {
	stamps := map[string]stamp{}
	err := filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		st, err := stampOf(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		stamps[filepath.ToSlash(rel)] = st
		return nil
	})
	if err != nil {
		return skilld.Errorf(skilld.EINTERNAL, "skill cache: %w", err)
	}
	e.stamps, e.verified = stamps, true
	return nil
}

// unchanged reports whether every recorded inode still has its stamp.
// Names are looked up from the folder's descriptor: one path walk, not one
// per file.
func (e *entry) unchanged(dir string) bool {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	for rel, want := range e.stamps {
		var st unix.Stat_t
		if rel == "." {
			err = unix.Fstat(fd, &st)
		} else {
			err = unix.Fstatat(fd, rel, &st, unix.AT_SYMLINK_NOFOLLOW)
		}
		if err != nil || stampFrom(&st) != want {
			return false
		}
	}
	return true
}

func stampOf(p string) (stamp, error) {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return stamp{}, err
	}
	return stampFrom(&st), nil
}

func stampFrom(st *unix.Stat_t) stamp {
	return stamp{dev: st.Dev, ino: st.Ino, mode: st.Mode, size: st.Size, mtime: st.Mtim, ctime: st.Ctim}
}
