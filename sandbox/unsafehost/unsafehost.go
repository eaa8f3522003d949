// Package unsafehost is the sandbox provider for machines without user
// namespaces: commands run as ordinary processes of the server's user, in
// the task's folder, with the server's view of the file system and network.
// It isolates nothing and says so (Info.Warning), so an operator must ask
// for it by name. What it still guarantees: a minimal environment (none of
// the server's variables), the per-command limits this machine can enforce
// (cgroups when the server may create them, else per-process resource
// limits), and skill files that are the task's own copies, written from the
// package's bytes, so no task can change what another task receives.
package unsafehost

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"sync"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/sandbox"
	"github.com/skilld/skilld/sandbox/internal/hostfs"
	"github.com/skilld/skilld/sandbox/internal/proc"
	"github.com/skilld/skilld/sandbox/skillcache"
)

// Name is the provider's name.
const Name = "unsafe-host"

// Config configures the provider.
type Config struct {
	// Root holds the sandboxes, one folder per sandbox; created with mode
	// 0700.
	Root string
	// Limits are the default limits of every command.
	Limits sandbox.Limits
}

// Provider runs commands on the host.
type Provider struct {
	root     string
	limits   sandbox.Limits
	controls *proc.Controls
}

var _ sandbox.Provider = (*Provider)(nil)

// New returns the provider.
func New(cfg Config) (*Provider, error) {
	if cfg.Root == "" {
		return nil, skilld.Errorf(skilld.EINVALID, "unsafe-host: Root is required")
	}
	if err := os.MkdirAll(cfg.Root, 0o700); err != nil {
		return nil, fmt.Errorf("unsafe-host: %w", err)
	}
	return &Provider{root: cfg.Root, limits: cfg.Limits.WithDefaults(), controls: proc.Detect()}, nil
}

// Name is "unsafe-host".
func (p *Provider) Name() string { return Name }

// Info says that nothing is isolated.
func (p *Provider) Info() sandbox.Info {
	who := fmt.Sprintf("uid %d", os.Geteuid())
	if u, err := user.Current(); err == nil {
		who = fmt.Sprintf("%s (uid %s)", u.Username, u.Uid)
	}
	return sandbox.Info{
		Provider: Name, Isolated: false, Enforced: p.controls.Enforced(false), Notes: p.controls.Notes(),
		Warning: fmt.Sprintf("sandbox unsafe-host: skill scripts run on this machine as %s, with its files, processes and network in reach; "+
			"run only skills you trust, or install bubblewrap and use --sandbox bwrap", who),
	}
}

// List returns the IDs of the sandboxes in the provider's folder.
func (p *Provider) List(context.Context) ([]string, error) { return hostfs.List(p.root) }

// Close removes the provider's cgroup folders.
func (p *Provider) Close() error {
	p.controls.Close()
	return nil
}

// Create makes <root>/<id>/workspace with an empty skills/ in it.
func (p *Provider) Create(_ context.Context, c sandbox.CreateParams) (sandbox.Sandbox, error) {
	if err := sandbox.CheckID(c.ID); err != nil {
		return nil, err
	}
	if err := sandbox.CheckEnv(c.Env); err != nil {
		return nil, err
	}
	if err := sandbox.CheckDisk(c.Disk, "unsafe-host runs commands in a plain folder of the host"); err != nil {
		return nil, err
	}
	if c.Rootfs != "" {
		return nil, skilld.Errorf(skilld.EUNAVAILABLE, "the root file system %q was asked for, and unsafe-host runs commands on the host itself", c.Rootfs)
	}
	f, err := hostfs.NewFolder(Name, p.root, c.ID, hostfs.FolderOptions{Reopen: c.Reopen})
	if err != nil {
		return nil, err
	}
	env := sandbox.MergeEnv(sandbox.BaseEnv(), append([]string{"HOME=" + f.Workspace}, c.Env...))
	return &sb{Folder: f, p: p, env: env, limits: c.Limits.Or(p.limits), placed: map[string]string{}}, nil
}

var _ sandbox.Sandbox = (*sb)(nil)

type sb struct {
	*hostfs.Folder
	p      *Provider
	env    []string
	limits sandbox.Limits

	mu     sync.Mutex
	placed map[string]string // skill folder name → digest
}

// Exec runs sh -c in the workspace folder.
func (s *sb) Exec(ctx context.Context, p sandbox.ExecParams) (*sandbox.Result, error) {
	ctx, lim, done, err := s.Begin(ctx, p, s.limits)
	if err != nil {
		return nil, err
	}
	defer done()
	out, err := s.p.controls.Run(ctx, proc.Spec{Argv: []string{"/bin/sh", "-c", p.Command}, Env: sandbox.MergeEnv(s.env, p.Env), Dir: s.Workspace, Limits: lim, Progress: p.Progress})
	if err != nil {
		return nil, err
	}
	code := proc.ExitCode(out.State)
	return &sandbox.Result{Output: out.Output, Truncated: out.Truncated, Limit: out.Limit, ExitCode: code, Limits: lim, Duration: out.Duration}, nil
}

// Place writes the task's own copy of pkg into a temporary folder and
// renames it into place: never a link into a shared cache.
func (s *sb) Place(ctx context.Context, dir string, pkg *pack.Package) error {
	name, err := sandbox.CheckSkillDir(dir)
	if err != nil {
		return err
	}
	if err := s.Removed(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch d, ok := s.placed[name]; {
	case ok && d == pkg.Digest():
		return nil
	case ok:
		return skilld.Errorf(skilld.ECONFLICT, "%s holds another package (%s)", dir, d)
	}
	skills := filepath.Join(s.Workspace, sandbox.SkillsDir)
	// A command may have removed or replaced skills/: only a real folder
	// is written into.
	if info, err := os.Lstat(skills); err != nil || !info.IsDir() {
		os.Remove(skills)
		if err := os.Mkdir(skills, 0o755); err != nil {
			return fmt.Errorf("placing %s: %w", dir, err)
		}
	}
	var b [6]byte
	rand.Read(b[:])
	tmp := filepath.Join(skills, ".tmp-"+hex.EncodeToString(b[:]))
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return fmt.Errorf("placing %s: %w", dir, err)
	}
	err = skillcache.WriteFiles(ctx, tmp, pkg, false)
	final := filepath.Join(skills, name)
	if err == nil {
		// Whatever a command put at that name is not the skill.
		hostfs.RemoveAll(final)
		err = os.Rename(tmp, final)
	}
	if err != nil {
		hostfs.RemoveAll(tmp)
		return fmt.Errorf("placing %s: %w", dir, err)
	}
	s.placed[name] = pkg.Digest()
	return nil
}
