package hostfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// RemoveAll removes dir and everything in it. A task may have left folders
// without write or search permission, which stop a non-root server's
// os.RemoveAll; those are made writable and the removal tried again. The
// fixing goes through an os.Root, so a link a task planted can at worst
// point it at another file of the same folder, never at a host file.
func RemoveAll(dir string) error {
	err := os.RemoveAll(dir)
	if err == nil || !errors.Is(err, fs.ErrPermission) {
		return err
	}
	r, oerr := os.OpenRoot(dir)
	if oerr != nil {
		return errors.Join(err, oerr)
	}
	fixModes(r, ".")
	r.Close()
	return os.RemoveAll(dir)
}

// fixModes gives the owner full access to the folder rel and every folder
// below it.
func fixModes(r *os.Root, rel string) {
	if r.Chmod(rel, 0o700) != nil {
		return
	}
	d, err := r.OpenFile(rel, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return
	}
	entries, _ := d.ReadDir(-1)
	d.Close()
	for _, e := range entries {
		if e.IsDir() {
			fixModes(r, filepath.Join(rel, e.Name()))
		}
	}
}
