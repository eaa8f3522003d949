// Package hostfs is the host side of a sandbox's files: the task's view of
// /workspace for the in-process tools (read, write, list), with placed
// skills read-only and no path or link leading out, and the removal of a
// sandbox folder whatever modes a task left in it.
package hostfs

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/sandbox"
)

// Owner is the host user and group that files the tools create get, so
// commands running as that user can change them later.
type Owner struct{ UID, GID int }

// View is a workspace folder on the host as the task sees /workspace.
type View struct {
	// Workspace is the host folder behind /workspace.
	Workspace string
	// Mounts, when set, returns the placed skills that are not in the
	// workspace folder itself: skill folder name → host folder of its
	// files. Without it, skills/ is an ordinary folder of the workspace
	// (still read-only to the tools).
	Mounts func() map[string]string
	// Owner, when set, is given to every file and folder the tools create.
	Owner *Owner
}

// target is where a clean relative path leads: a root to open it in and
// the path inside that root.
type target struct {
	root     string
	inner    string
	readOnly bool
	// skillsRoot is set for "skills" itself when skills are mounted: a
	// folder that exists only in the task's view.
	skillsRoot bool
}

func (v *View) resolve(p string) (string, target, error) {
	rel, err := sandbox.CleanPath(p)
	if err != nil {
		return "", target{}, err
	}
	if !sandbox.InSkills(rel) || v.Mounts == nil {
		return rel, target{root: v.Workspace, inner: rel, readOnly: sandbox.InSkills(rel)}, nil
	}
	rest := strings.TrimPrefix(strings.TrimPrefix(rel, sandbox.SkillsDir), "/")
	if rest == "" {
		return rel, target{skillsRoot: true, readOnly: true}, nil
	}
	name, inner, _ := strings.Cut(rest, "/")
	dir, ok := v.Mounts()[name]
	if !ok {
		return rel, target{}, notFound(p)
	}
	return rel, target{root: dir, inner: cmp.Or(inner, "."), readOnly: true}, nil
}

func notFound(p string) error {
	return skilld.Errorf(skilld.ENOTFOUND, "no file or folder %q in the workspace", p)
}

// fsError turns an error from the file system into a typed one naming p.
func fsError(p, doing string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return notFound(p)
	case errors.Is(err, syscall.ENOTDIR):
		return skilld.Errorf(skilld.ENOTFOUND, "%q: a part of the path is a file, not a folder", p)
	case strings.Contains(err.Error(), "path escapes"):
		return skilld.Errorf(skilld.EINVALID, "cannot %s %q: it is a link that leads out of the workspace", doing, p)
	}
	return skilld.Errorf(skilld.EINVALID, "cannot %s %q: %v", doing, p, unwrapPath(err))
}

// unwrapPath drops the host path an *fs.PathError carries: the model should
// read the workspace path it gave, not the server's folders.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// Stat describes one entry, following links that stay inside.
func (v *View) Stat(_ context.Context, p string) (sandbox.FileInfo, error) {
	rel, t, err := v.resolve(p)
	if err != nil {
		return sandbox.FileInfo{}, err
	}
	if t.skillsRoot {
		return sandbox.FileInfo{Path: rel, Mode: fs.ModeDir | 0o555, ReadOnly: true}, nil
	}
	r, err := os.OpenRoot(t.root)
	if err != nil {
		return sandbox.FileInfo{}, fsError(p, "read", err)
	}
	defer r.Close()
	info, err := r.Stat(t.inner)
	if err != nil {
		return sandbox.FileInfo{}, fsError(p, "read", err)
	}
	return fileInfo(rel, info, t.readOnly), nil
}

func fileInfo(rel string, info fs.FileInfo, readOnly bool) sandbox.FileInfo {
	return sandbox.FileInfo{Path: rel, Size: info.Size(), Mode: info.Mode(), ModTime: info.ModTime(), ReadOnly: readOnly}
}

// ReadFile reads a regular file of at most max bytes. The file is opened
// without blocking and checked after opening, so a FIFO or a device a
// command left cannot hang the tool, and a name swapped since a check
// cannot change what is read.
func (v *View) ReadFile(_ context.Context, p string, max int64) ([]byte, error) {
	_, t, err := v.resolve(p)
	if err != nil {
		return nil, err
	}
	if t.skillsRoot {
		return nil, isFolder(p)
	}
	r, err := os.OpenRoot(t.root)
	if err != nil {
		return nil, fsError(p, "read", err)
	}
	defer r.Close()
	f, err := r.OpenFile(t.inner, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fsError(p, "read", err)
	}
	defer f.Close()
	info, err := f.Stat()
	switch {
	case err != nil:
		return nil, fsError(p, "read", err)
	case info.IsDir():
		return nil, isFolder(p)
	case !info.Mode().IsRegular():
		return nil, skilld.Errorf(skilld.EINVALID, "%q is not a regular file (%s)", p, info.Mode().Type())
	case max > 0 && info.Size() > max:
		return nil, skilld.Errorf(skilld.ETOOLARGE, "%q is %d bytes, more than the %d this tool reads at once", p, info.Size(), max)
	}
	limit := info.Size() + 1
	if max > 0 {
		limit = max + 1
	}
	b, err := io.ReadAll(io.LimitReader(f, limit))
	if err != nil {
		return nil, fsError(p, "read", err)
	}
	if max > 0 && int64(len(b)) > max {
		return nil, skilld.Errorf(skilld.ETOOLARGE, "%q grew past the %d bytes this tool reads at once", p, max)
	}
	return b, nil
}

func isFolder(p string) error {
	return skilld.Errorf(skilld.EINVALID, "%q is a folder; list it instead", p)
}

// WriteFile replaces a file atomically: the bytes go to a new file with a
// random name (created exclusively, so nothing a command prepared under
// that name is followed), which is then renamed over the target. An
// existing file keeps its mode (a script stays executable).
func (v *View) WriteFile(_ context.Context, p string, data []byte) error {
	if rel, err := sandbox.CleanPath(p); err == nil && sandbox.InSkills(rel) {
		return skilld.Errorf(skilld.EFORBIDDEN, "%q is under %s/, which holds the placed skills and is read-only; write elsewhere in %s", p, sandbox.SkillsDir, sandbox.Workdir)
	}
	rel, t, err := v.resolve(p)
	if err != nil {
		return err
	}
	if rel == "." {
		return isFolder(p)
	}
	r, err := os.OpenRoot(t.root)
	if err != nil {
		return fsError(p, "write", err)
	}
	defer r.Close()
	if err := v.mkdirs(r, path.Dir(rel)); err != nil {
		return fsError(p, "create the folders of", err)
	}
	mode := fs.FileMode(0o644)
	if info, err := r.Lstat(rel); err == nil {
		switch {
		case info.IsDir():
			return isFolder(p)
		case info.Mode().IsRegular():
			mode = info.Mode().Perm()
		}
	}
	var b [8]byte
	rand.Read(b[:])
	tmp := path.Join(path.Dir(rel), ".skilld-write-"+hex.EncodeToString(b[:]))
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fsError(p, "write", err)
	}
	_, werr := f.Write(data)
	werr = errors.Join(werr, f.Chmod(mode))
	if v.Owner != nil {
		werr = errors.Join(werr, f.Chown(v.Owner.UID, v.Owner.GID))
	}
	if werr = errors.Join(werr, f.Close()); werr == nil {
		werr = r.Rename(tmp, rel)
	}
	if werr != nil {
		r.Remove(tmp)
		return fsError(p, "write", werr)
	}
	return nil
}

// mkdirs creates dir and its parents one at a time inside r, giving each
// folder it creates to the owner.
func (v *View) mkdirs(r *os.Root, dir string) error {
	if dir == "." {
		return nil
	}
	cur := ""
	for part := range strings.SplitSeq(dir, "/") {
		cur = path.Join(cur, part)
		err := r.Mkdir(cur, 0o755)
		switch {
		case err == nil:
			if v.Owner != nil {
				if err := r.Lchown(cur, v.Owner.UID, v.Owner.GID); err != nil {
					return err
				}
			}
		case errors.Is(err, fs.ErrExist):
			info, serr := r.Stat(cur)
			if serr != nil {
				return serr
			}
			if !info.IsDir() {
				return fmt.Errorf("%s is a file: %w", cur, syscall.ENOTDIR)
			}
		default:
			return err
		}
	}
	return nil
}

// List returns a folder's entries sorted by name, links shown as links.
func (v *View) List(_ context.Context, p string) ([]sandbox.FileInfo, error) {
	rel, t, err := v.resolve(p)
	if err != nil {
		return nil, err
	}
	if t.skillsRoot {
		var out []sandbox.FileInfo
		for name := range v.Mounts() {
			out = append(out, sandbox.FileInfo{Path: path.Join(rel, name), Mode: fs.ModeDir | 0o555, ReadOnly: true})
		}
		slices.SortFunc(out, func(a, b sandbox.FileInfo) int { return strings.Compare(a.Path, b.Path) })
		return out, nil
	}
	r, err := os.OpenRoot(t.root)
	if err != nil {
		return nil, fsError(p, "list", err)
	}
	defer r.Close()
	d, err := r.OpenFile(t.inner, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fsError(p, "list", err)
	}
	defer d.Close()
	if info, err := d.Stat(); err != nil || !info.IsDir() {
		if err != nil {
			return nil, fsError(p, "list", err)
		}
		return nil, skilld.Errorf(skilld.EINVALID, "%q is a file, not a folder", p)
	}
	entries, err := d.ReadDir(-1)
	if err != nil {
		return nil, fsError(p, "list", err)
	}
	slices.SortFunc(entries, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	out := make([]sandbox.FileInfo, 0, len(entries))
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			continue // removed since the listing
		}
		child := path.Join(rel, e.Name())
		out = append(out, fileInfo(child, info, t.readOnly || sandbox.InSkills(child)))
	}
	return out, nil
}
