package hostfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/sandbox"
	"github.com/skilld/skilld/sandbox/internal/proc"
)

// Folder is what every provider's sandbox has on the host: its own folder
// <root>/<id> (never shown to commands), the workspace folder in it with an
// empty skills/, the task's view of the workspace, and its running
// commands, stopped before the folder is removed.
type Folder struct {
	*View
	Commands proc.Tracker

	provider string
	id       string
	dir      string
}

// FolderOptions shape NewFolder.
type FolderOptions struct {
	// Reopen takes over an existing sandbox folder with its files (a task
	// resumed after a restart) instead of refusing its ID.
	Reopen bool
	// Prepare, when set, makes the workspace instead of NewFolder: given
	// the sandbox's folder (just made and empty, or found on reopen:
	// fresh tells which), it returns the host folder behind /workspace
	// (in the sandbox's folder or elsewhere) and who owns what is made in
	// it (nil: the server's user). When it fails for a fresh sandbox, the
	// folder is removed; Prepare undoes its own work first.
	Prepare func(dir string, fresh bool) (workspace string, owner *Owner, err error)
}

// NewFolder creates <root>/<id> with a workspace holding an empty skills/
// (<root>/<id>/workspace unless o.Prepare says otherwise). An ID in use is
// ECONFLICT, unless o.Reopen is set: then an existing sandbox folder is
// taken over with its files. On any failure nothing new is left.
func NewFolder(provider, root, id string, o FolderOptions) (*Folder, error) {
	dir := filepath.Join(root, id)
	f := &Folder{View: &View{}, provider: provider, id: id, dir: dir}
	fresh := true
	if err := os.Mkdir(dir, 0o700); err != nil {
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("%s: creating the sandbox: %w", provider, err)
		}
		if !o.Reopen {
			return nil, skilld.Errorf(skilld.ECONFLICT, "sandbox %q exists", id)
		}
		// Only a real folder is taken over, never a link somewhere else.
		if info, err := os.Lstat(dir); err != nil || !info.IsDir() {
			return nil, skilld.Errorf(skilld.ECONFLICT, "sandbox %q exists and is not a sandbox folder", id)
		}
		fresh = false
	}
	fail := func(err error) (*Folder, error) {
		if !fresh {
			return nil, fmt.Errorf("%s: reopening the sandbox: %w", provider, err)
		}
		os.RemoveAll(dir)
		return nil, fmt.Errorf("%s: creating the sandbox: %w", provider, err)
	}
	prepare := o.Prepare
	if prepare == nil {
		prepare = func(dir string, _ bool) (string, *Owner, error) {
			ws := filepath.Join(dir, "workspace")
			return ws, nil, EnsureDir(ws, nil)
		}
	}
	ws, owner, err := prepare(dir, fresh)
	if err != nil {
		return fail(err)
	}
	f.Workspace, f.Owner = ws, owner
	if err := EnsureDir(filepath.Join(ws, sandbox.SkillsDir), owner); err != nil {
		return fail(err)
	}
	return f, nil
}

// List returns the sandbox IDs under root (a missing root holds none); a
// provider's own state there (names starting with a dot) is not one.
func List(root string) ([]string, error) {
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out, err
}

// EnsureDir makes a folder (mode 0755) given to owner, unless it is one
// already; something else in its place is an error.
func EnsureDir(p string, owner *Owner) error {
	if info, err := os.Lstat(p); err == nil {
		if !info.IsDir() {
			return fmt.Errorf("%s is not a folder", p)
		}
		return nil
	}
	if err := os.Mkdir(p, 0o755); err != nil {
		return err
	}
	if owner != nil {
		return os.Lchown(p, owner.UID, owner.GID)
	}
	return nil
}

func (f *Folder) ID() string       { return f.id }
func (f *Folder) HostPath() string { return f.Workspace }

// Dir is the sandbox's own folder, the workspace's parent.
func (f *Folder) Dir() string { return f.dir }

// Begin registers a command about to run: its context (cancelled when the
// sandbox is removed) and its limits, p's over the sandbox's defaults
// with the timeout capped. Call done when the command has ended.
func (f *Folder) Begin(ctx context.Context, p sandbox.ExecParams, defaults sandbox.Limits) (context.Context, sandbox.Limits, func(), error) {
	if err := sandbox.CheckCommand(p.Command); err != nil {
		return nil, sandbox.Limits{}, nil, err
	}
	if err := sandbox.CheckExecEnv(p.Env); err != nil {
		return nil, sandbox.Limits{}, nil, err
	}
	ctx, done, err := f.Commands.Begin(ctx, f.id)
	if err != nil {
		return nil, sandbox.Limits{}, nil, err
	}
	lim := p.Limits.Or(defaults)
	lim.Timeout = min(lim.Timeout, sandbox.MaxTimeout)
	return ctx, lim, done, nil
}

// Removed is the error of a call on a removed sandbox, or nil.
func (f *Folder) Removed() error {
	if f.Commands.Closed() {
		return skilld.Errorf(skilld.EUNAVAILABLE, "sandbox %s was removed", f.id)
	}
	return nil
}

// Destroy stops running commands and removes the sandbox's folder.
func (f *Folder) Destroy(context.Context) error {
	f.Commands.Close()
	if err := RemoveAll(f.dir); err != nil {
		return fmt.Errorf("%s: removing sandbox %s: %w", f.provider, f.id, err)
	}
	return nil
}
