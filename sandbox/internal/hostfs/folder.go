package hostfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

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

// NewFolder creates <root>/<id>/workspace/skills. An ID in use is
// ECONFLICT, unless reopen is set: then an existing sandbox folder is
// taken over with its files (a task resumed after a restart). On any
// failure nothing new is left.
func NewFolder(provider, root, id string, reopen bool) (*Folder, error) {
	dir := filepath.Join(root, id)
	f := &Folder{View: &View{Workspace: filepath.Join(dir, "workspace")}, provider: provider, id: id, dir: dir}
	if err := os.Mkdir(dir, 0o700); err != nil {
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("%s: creating the sandbox: %w", provider, err)
		}
		if !reopen {
			return nil, skilld.Errorf(skilld.ECONFLICT, "sandbox %q exists", id)
		}
		// Only a real folder with a real workspace in it is taken over,
		// never a link somewhere else.
		if info, err := os.Lstat(dir); err != nil || !info.IsDir() {
			return nil, skilld.Errorf(skilld.ECONFLICT, "sandbox %q exists and is not a sandbox folder", id)
		}
		if info, err := os.Lstat(f.Workspace); err == nil && info.IsDir() {
			return f, nil
		}
		if err := os.Mkdir(f.Workspace, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("%s: reopening the sandbox: %w", provider, err)
		}
		return f, nil
	}
	if err := os.MkdirAll(filepath.Join(f.Workspace, sandbox.SkillsDir), 0o755); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("%s: creating the sandbox: %w", provider, err)
	}
	return f, nil
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
