package rootfs

import (
	"os"
	"path"
	"strings"
	"syscall"
)

// Whiteouts, as the OCI image spec (layer.md) and docker write them.
const (
	// whiteoutPrefix marks ".wh.<name>": <name> of lower layers is gone.
	whiteoutPrefix = ".wh."
	// opaqueMarker makes its folder opaque: every entry lower layers had
	// in it is gone.
	opaqueMarker = ".wh..wh..opq"
	// metaPrefix starts other AUFS bookkeeping names (".wh..wh.plnk",
	// ".wh..wh.aufs"), which mean nothing to an unpacked tree.
	metaPrefix = ".wh..wh."
)

// whiteout applies the entry dir/base, base starting with ".wh.". A
// whiteout only ever hides what lower layers had: what this layer wrote
// stays, whether its entry came before or after the whiteout in the tar.
func (u *unpacker) whiteout(dir, base string) error {
	if base == opaqueMarker {
		return u.opaque(dir)
	}
	if strings.HasPrefix(base, metaPrefix) {
		return nil
	}
	what := strings.TrimPrefix(base, whiteoutPrefix)
	if what == "" || what == "." || what == ".." {
		return invalidf("entry %q: a whiteout that names no entry", path.Join(dir, base))
	}
	name := path.Join(dir, what)
	if u.layer[name] {
		// This layer made name (or something in it) before the whiteout
		// came: only what lower layers had in it goes.
		return u.opaque(name)
	}
	u.forget()
	if err := u.root.RemoveAll(name); err != nil && !missing(err) {
		return entryError(name, err)
	}
	return nil
}

// opaque removes from the folder dir everything lower layers put there,
// keeping what this layer wrote so far; what it writes after the marker
// comes later anyway. A dir that is not a folder has nothing to hide.
func (u *unpacker) opaque(dir string) error {
	fi, err := u.root.Lstat(dir)
	if missing(err) {
		return nil
	}
	if err != nil {
		return entryError(dir, err)
	}
	if !fi.IsDir() {
		return nil
	}
	u.forget()
	return u.prune(dir)
}

// prune removes from the folder dir every entry the current layer did not
// write, and prunes the folders it did write the same way: what a lower
// layer had in them is below the opaque folder too.
func (u *unpacker) prune(dir string) error {
	f, err := u.root.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return entryError(dir, err)
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return entryError(dir, err)
	}
	for _, n := range names {
		p := path.Join(dir, n)
		if !u.layer[p] {
			if err := u.root.RemoveAll(p); err != nil {
				return entryError(p, err)
			}
			continue
		}
		fi, err := u.root.Lstat(p)
		if err != nil {
			return entryError(p, err)
		}
		if fi.IsDir() {
			if err := u.prune(p); err != nil {
				return err
			}
		}
	}
	return nil
}
