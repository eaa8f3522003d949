package pack

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/internal/ctxio"
)

// ReadDir reads the directory tree at root into a package. The directory is
// the skill root, so no top folder is stripped; only __MACOSX and "._" files
// are skipped, as in archives.
//
// Every folder is opened as an os.Root and its entries are opened relative to
// it, so no name can resolve outside the tree and each file costs one open,
// not one per path component. Any symbolic link inside the tree, to a file or
// a folder, is refused rather than followed: a package must mean the same
// bytes wherever it is read. Sockets, devices and FIFOs are refused too. Each
// file's size is checked against the limits before it is read, and exactly
// that many bytes are read.
func ReadDir(ctx context.Context, root string, lim Limits) (*Package, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rt, err := os.OpenRoot(root)
	if err != nil {
		st, serr := os.Stat(root)
		switch {
		case errors.Is(serr, fs.ErrNotExist):
			return nil, skilld.Errorf(skilld.ENOTFOUND, "directory %q does not exist", root)
		case serr == nil && !st.IsDir():
			return nil, skilld.Errorf(skilld.EINVALID, "%q is not a directory", root)
		}
		return nil, skilld.Errorf(skilld.EINVALID, "cannot open directory %q: %w", root, err)
	}
	defer rt.Close()
	w := dirWalker{ctx: ctx, root: root, b: budget{lim: lim}}
	if err := w.walk(rt, ""); err != nil {
		return nil, err
	}
	return finish(w.files, lim, false)
}

type dirWalker struct {
	ctx   context.Context
	root  string
	b     budget
	files []File
}

// walk reads the folder dir (relative to the tree's root, "" for the root)
// opened as r, in byte order of names.
func (w *dirWalker) walk(r *os.Root, dir string) error {
	d, err := r.Open(".")
	if err != nil {
		return skilld.Errorf(skilld.EINVALID, "cannot read %q in %q: %w", dir, w.root, err)
	}
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return skilld.Errorf(skilld.EINVALID, "cannot read %q in %q: %w", dir, w.root, err)
	}
	slices.SortFunc(entries, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	for _, e := range entries {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		p := path.Join(dir, e.Name())
		if err := CheckPath(p); err != nil {
			return err
		}
		t := e.Type()
		switch {
		case t.IsDir():
			if p == "__MACOSX" {
				continue
			}
			sub, err := r.OpenRoot(e.Name())
			if err != nil {
				return skilld.Errorf(skilld.EINVALID, "cannot read %q in %q: %w", p, w.root, err)
			}
			err = w.walk(sub, p)
			sub.Close()
			if err != nil {
				return err
			}
			continue
		case skipped(p):
			continue
		case !t.IsRegular():
			// Symbolic links included: unsupportedMode names them first.
			return errUnsupported("directory entry", p, unsupportedMode(t))
		}
		f, err := w.readFile(r, e.Name(), p)
		if err != nil {
			return err
		}
		w.files = append(w.files, f)
	}
	return nil
}

// readFile reads one regular file, admitting its size to the budget before
// reading any byte of it.
func (w *dirWalker) readFile(r *os.Root, name, p string) (File, error) {
	fail := func(err error) (File, error) {
		return File{}, skilld.Errorf(skilld.EINVALID, "cannot read %q: %w", p, err)
	}
	fh, err := r.Open(name)
	if err != nil {
		return fail(err)
	}
	defer fh.Close()
	// Stat the open file, not the name: it is what will be read, even if
	// the name was swapped for something else since the folder was listed.
	info, err := fh.Stat()
	if err != nil {
		return fail(err)
	}
	if !info.Mode().IsRegular() {
		return File{}, errUnsupported("directory entry", p, "changed into something other than a regular file while being read")
	}
	size := info.Size()
	if err := w.b.admit(p, size); err != nil {
		return File{}, err
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(ctxio.Reader(w.ctx, fh), data); err != nil {
		if w.ctx.Err() != nil {
			return File{}, w.ctx.Err()
		}
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return File{}, skilld.Errorf(skilld.EINVALID, "file %q changed size while being read (shorter than %d bytes)", p, size)
		}
		return fail(err)
	}
	return File{Path: p, Data: data, Exec: info.Mode().Perm()&0o111 != 0}, nil
}
