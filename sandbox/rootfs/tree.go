package rootfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"syscall"
	"time"
)

// unpacker applies an image's layers to one tree, every operation through
// an os.Root on it, and remembers across layers what the end of the unpack
// needs.
type unpacker struct {
	root *os.Root
	lim  Limits

	entries int   // tar entries read, all layers
	bytes   int64 // bytes of entry data, all layers

	dirs    map[string]dirMeta // folder → what its entry said (or an implicit folder's 0755)
	dropped map[string]bool    // names of devices and FIFOs not created, for hard links to them
	known   map[string]bool    // names known to be folders (or links to folders) of the tree
	layer   map[string]bool    // names the current layer wrote, and their folders
	buf     []byte
}

// dirMeta is what a folder gets once every layer is applied.
type dirMeta struct {
	mode  fs.FileMode
	mtime time.Time
}

// stats is what an unpack did, for the marker.
type stats struct {
	Layers  int   `json:"layers"`
	Entries int   `json:"entries"`
	Bytes   int64 `json:"bytes"`
}

// unpackTree applies img's layers, in order, to the empty folder dir.
func unpackTree(ctx context.Context, a *archive, img *image, dir string, lim Limits) (stats, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return stats{}, unavailablef("opening the new tree: %w", err)
	}
	defer root.Close()
	u := &unpacker{
		root:    root,
		lim:     lim,
		dirs:    map[string]dirMeta{".": {mode: 0o755}},
		dropped: map[string]bool{},
		known:   map[string]bool{},
		layer:   map[string]bool{},
		buf:     make([]byte, copyBufSize),
	}
	for i, l := range img.layers {
		if err := u.applyLayer(ctx, a, l); err != nil {
			return stats{}, wrap(err, "layer %d of %d (%s)", i+1, len(img.layers), l.name)
		}
	}
	if err := u.finish(); err != nil {
		return stats{}, err
	}
	return stats{Layers: len(img.layers), Entries: u.entries, Bytes: u.bytes}, nil
}

// parents makes sure the folders above name exist, making missing ones
// (mode 0755 in the end, as runtimes make them). A link to a folder of the
// tree is walked through, as a runtime would; os.Root refuses one that
// leads out of the tree.
func (u *unpacker) parents(name string) error {
	dir := path.Dir(name)
	if dir == "." || u.known[dir] {
		return nil
	}
	if err := u.parents(dir); err != nil {
		return err
	}
	fi, err := u.root.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := u.root.Mkdir(dir, 0o700); err != nil {
			return err
		}
		u.dirs[dir] = dirMeta{mode: 0o755}
	case err != nil:
		return err
	case fi.IsDir():
	case fi.Mode()&fs.ModeSymlink != 0:
		st, err := u.root.Stat(dir)
		if err != nil {
			return err
		}
		if !st.IsDir() {
			return fmt.Errorf("%s: %w", dir, syscall.ENOTDIR)
		}
	default:
		return fmt.Errorf("%s: %w", dir, syscall.ENOTDIR)
	}
	u.known[dir] = true
	return nil
}

// clear makes room for a new entry at name: its folders exist and nothing
// is at name itself. What a lower layer (or an earlier entry) had there
// goes, a folder with everything in it: an upper layer's entry hides it.
func (u *unpacker) clear(name string) error {
	if err := u.parents(name); err != nil {
		return err
	}
	fi, err := u.root.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode().IsRegular() {
		return u.root.Remove(name)
	}
	u.forget()
	if fi.IsDir() {
		return u.root.RemoveAll(name)
	}
	return u.root.Remove(name)
}

// forget drops what is known of folders, after a folder or a link was
// removed: a known name may have been in it or gone through it.
func (u *unpacker) forget() { clear(u.known) }

// wrote records that the current layer made name, and so its folders.
func (u *unpacker) wrote(name string) {
	for p := name; p != "." && !u.layer[p]; p = path.Dir(p) {
		u.layer[p] = true
	}
}

// finish gives every folder its mode and time, deepest first. Folders are
// 0700 while layers are applied, so that one an image makes read-only
// (0555 is common) still takes the entries that follow it when the server
// is not root; and adding entries to a folder would move its time.
func (u *unpacker) finish() error {
	var dirs []string
	err := fs.WalkDir(u.root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	if err != nil {
		return unavailablef("walking the new tree: %w", err)
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		p := dirs[i]
		meta, ok := u.dirs[p]
		if !ok {
			meta = dirMeta{mode: 0o755}
		}
		f, err := u.root.OpenFile(p, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
		if err != nil {
			return unavailablef("setting the mode of %q: %w", p, err)
		}
		err = f.Chmod(meta.mode)
		f.Close()
		if err == nil && !meta.mtime.IsZero() {
			err = u.root.Chtimes(p, meta.mtime, meta.mtime)
		}
		if err != nil {
			return unavailablef("setting the mode of %q: %w", p, err)
		}
	}
	return nil
}
