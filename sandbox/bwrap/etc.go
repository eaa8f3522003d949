package bwrap

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
)

// etcView is a sandbox's /etc made ready on the host: a folder holding a
// copy of each chosen file (and link), the sandbox's own passwd and group,
// and an empty folder where each chosen folder is bound. A command's
// bubblewrap then mounts /etc with one bind plus one per folder, where it
// took one per entry: bubblewrap reads the whole mount table again for
// every bind, which made the curated /etc most of its time.
//
// The copies follow their sources: every command first compares each
// source's identity (device, inode, size, change time, mode, link target)
// with the copy's, and a change makes a new copy (a generation) for the
// commands that start after it; commands already running keep theirs,
// which is removed when the last of them ends.
type etcView struct {
	base    string
	entries []etcEntry
	own     []ownFile
	mu      sync.Mutex
	cur     *etcGen
	next    int
}

// etcEntry is one chosen entry of /etc.
type etcEntry struct {
	name string // under /etc
	src  string // where the server reads it
	bind string // where bubblewrap finds it, to bind a folder
	// follow resolves links as a bind does: the host's /etc, whose links
	// (resolv.conf into /run, localtime into /usr/share) point at what
	// the sandbox does not show. A root file system's links are kept as
	// links, which resolve inside it.
	follow bool
}

// ownFile is a file of the sandbox's own /etc.
type ownFile struct {
	name string
	data []byte
}

// etcGen is one copy of the chosen entries.
type etcGen struct {
	dir    string
	stamps []etcStamp
	args   []string
	refs   int
	old    bool // a newer generation exists: removed when refs is 0
}

// etcStamp is what a source was when copied; a copy is current while every
// source still is.
type etcStamp struct {
	kind      byte // 0 missing or not shown, 'f' file, 'd' folder, 'l' link
	dev, ino  uint64
	size      int64
	ctime     int64
	mode      uint32
	linkValue string
}

// newEtcView makes the folder generations live in, below dir (named for
// this process, so a crashed one's can be told apart and swept).
func newEtcView(dir string, entries []etcEntry, own []ownFile) (*etcView, error) {
	sweepOwned(dir, ".etc-", os.RemoveAll)
	// Traversable by the task uids that run bubblewrap; nothing in it is
	// writable but by the server.
	base, err := mkdirOwned(dir, ".etc-", 0o711)
	if err != nil {
		return nil, fmt.Errorf("bwrap: /etc for sandboxes: %w", err)
	}
	return &etcView{base: base, entries: entries, own: own}, nil
}

// acquire returns bubblewrap's arguments for /etc as its sources are now,
// and a release to call once the command has ended.
func (v *etcView) acquire() ([]string, func(), error) {
	stamps := make([]etcStamp, len(v.entries))
	for i, e := range v.entries {
		stamps[i] = stampOf(e)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.cur == nil || !slices.Equal(v.cur.stamps, stamps) {
		g, err := v.build(stamps)
		if err != nil {
			return nil, nil, err
		}
		if v.cur != nil {
			v.cur.old = true
			v.removeIfDone(v.cur)
		}
		v.cur = g
	}
	g := v.cur
	g.refs++
	var once sync.Once
	return g.args, func() {
		once.Do(func() {
			v.mu.Lock()
			defer v.mu.Unlock()
			g.refs--
			v.removeIfDone(g)
		})
	}, nil
}

func (v *etcView) removeIfDone(g *etcGen) {
	if g.old && g.refs == 0 {
		os.RemoveAll(g.dir)
	}
}

// close removes every generation. Commands still running keep their
// mounts of it.
func (v *etcView) close() {
	os.RemoveAll(v.base)
}

func stampOf(e etcEntry) etcStamp {
	stat := os.Lstat
	if e.follow {
		stat = os.Stat
	}
	info, err := stat(e.src)
	if err != nil {
		return etcStamp{}
	}
	st, _ := info.Sys().(*syscall.Stat_t)
	s := etcStamp{size: info.Size(), mode: uint32(info.Mode())}
	if st != nil {
		s.dev, s.ino, s.ctime = st.Dev, st.Ino, st.Ctim.Nano()
	}
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		s.kind = 'l'
		s.linkValue, _ = os.Readlink(e.src)
	case info.IsDir():
		s.kind = 'd'
	case info.Mode().IsRegular():
		s.kind = 'f'
	}
	return s
}

// build makes a generation from the sources as stamped. A source that
// changes while it is copied is caught by the next command's stamps.
func (v *etcView) build(stamps []etcStamp) (*etcGen, error) {
	dir := filepath.Join(v.base, strconv.Itoa(v.next))
	v.next++
	os.RemoveAll(dir)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("bwrap: /etc for sandboxes: %w", err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("bwrap: /etc for sandboxes: %w", err)
	}
	g := &etcGen{dir: dir, stamps: stamps, args: []string{"--ro-bind", dir, "/etc"}}
	for i, e := range v.entries {
		var err error
		dst := filepath.Join(dir, e.name)
		switch stamps[i].kind {
		case 'f':
			err = copyEtcFile(e, dst, fs.FileMode(stamps[i].mode).Perm())
		case 'l':
			err = os.Symlink(stamps[i].linkValue, dst)
		case 'd':
			if err = os.Mkdir(dst, 0o755); err == nil {
				g.args = append(g.args, "--ro-bind", e.bind, "/etc/"+e.name)
			}
		}
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("bwrap: /etc for sandboxes: copying %s: %w", e.src, err)
		}
	}
	for _, f := range v.own {
		if err := writeEtcFile(filepath.Join(dir, f.name), bytes.NewReader(f.data), 0o644); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("bwrap: /etc for sandboxes: %w", err)
		}
	}
	return g, nil
}

// copyEtcFile copies a file of /etc, never following a link the stamp did
// not (a root file system's file replaced by a link since).
func copyEtcFile(e etcEntry, dst string, perm fs.FileMode) error {
	flags := os.O_RDONLY | syscall.O_NONBLOCK
	if !e.follow {
		flags |= syscall.O_NOFOLLOW
	}
	src, err := os.OpenFile(e.src, flags, 0)
	if err != nil {
		return err
	}
	defer src.Close()
	if info, err := src.Stat(); err != nil || !info.Mode().IsRegular() {
		return fmt.Errorf("%s is no longer a regular file", e.src)
	}
	return writeEtcFile(dst, src, perm)
}

func writeEtcFile(dst string, r io.Reader, perm fs.FileMode) error {
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// The umask must not narrow what the source allowed.
		err = os.Chmod(dst, perm)
	}
	return err
}
