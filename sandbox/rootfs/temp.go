package rootfs

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/skilld/skilld/sandbox/internal/hostfs"
)

const (
	// tempPrefix starts the folders images are unpacked in, <dir>/.tmp-<random>.
	tempPrefix = ".tmp-"
	// lockName is a file in each, locked (flock) by the process unpacking
	// there for as long as it does. The kernel drops the lock when the
	// process ends however it ends, so an unlocked folder is an orphan;
	// unlike a process id, that holds across PID namespaces and reused
	// ids, and unlike an age, it never takes a slow unpack for a dead one.
	lockName = ".lock"
	// tempGrace is how old an unlocked folder must be to be an orphan: a
	// folder is made a moment before its lock is taken.
	tempGrace = time.Minute
)

// temp is a folder an image is being unpacked in.
type temp struct {
	dir  string
	lock *os.File // holds the flock
	done bool
}

// newTemp makes <dir>/.tmp-<random>, with the lock taken and an empty
// tree folder.
func newTemp(dir string) (*temp, error) {
	var b [8]byte
	rand.Read(b[:])
	t := &temp{dir: filepath.Join(dir, tempPrefix+hex.EncodeToString(b[:]))}
	if err := os.Mkdir(t.dir, 0o700); err != nil {
		return nil, unavailablef("making a folder to unpack in: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(t.dir, lockName), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		t.lock = f
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	}
	if err == nil {
		err = os.Mkdir(filepath.Join(t.dir, treeName), 0o700)
	}
	if err != nil {
		t.release()
		return nil, unavailablef("making a folder to unpack in: %w", err)
	}
	return t, nil
}

// committed records that the folder was renamed to final, which keeps
// it; its lock file has no use there.
func (t *temp) committed(final string) {
	t.done = true
	os.Remove(filepath.Join(final, lockName))
}

// release removes the folder unless it was committed (still holding the
// lock, so that no sweep takes it for an orphan meanwhile), then lets the
// lock go.
func (t *temp) release() {
	if !t.done {
		hostfs.RemoveAll(t.dir)
	}
	if t.lock != nil {
		t.lock.Close()
	}
}

// sweep removes the temporary folders of dir whose unpack is over without
// a rename: the process crashed or was killed. A folder still locked is
// some process's unpack in progress and stays.
func sweep(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), tempPrefix) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if release, ok := orphan(p); ok {
			errs = append(errs, hostfs.RemoveAll(p))
			release()
		}
	}
	return errors.Join(errs...)
}

// orphan reports whether the temporary folder p belongs to no process,
// and if so holds its lock until release is called.
func orphan(p string) (release func(), ok bool) {
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, false
	}
	if !fi.IsDir() {
		return func() {}, true // not one of ours: nothing is unpacking there
	}
	if time.Since(fi.ModTime()) < tempGrace {
		return nil, false
	}
	f, err := os.OpenFile(filepath.Join(p, lockName), os.O_RDWR|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return func() {}, true // its maker died before taking the lock
	}
	if err != nil {
		return nil, false
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		f.Close()
		return nil, false
	}
	return func() { f.Close() }, true
}
