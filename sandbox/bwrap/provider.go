// Package bwrap is the default sandbox provider on Linux: every command runs
// under bubblewrap in new PID, IPC, UTS, cgroup, mount and (unless the
// agent allows networking) network namespaces, with its own /proc, /dev and
// /tmp, read-only system folders, the task folder as the only writable path
// at /workspace, placed skills bound read-only from the skill cache, no
// capabilities, a minimal environment and an unprivileged user. When the
// command ends, its PID namespace ends with it, so nothing it started
// survives, however it detached.
//
// As root, bwrap sets the sandbox up and util-linux's setpriv then becomes
// the configured unprivileged user (nobody by default) with no
// capabilities; as another user, bwrap makes its own user namespace.
package bwrap

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/sandbox"
	"github.com/skilld/skilld/sandbox/internal/hostfs"
	"github.com/skilld/skilld/sandbox/internal/proc"
	"github.com/skilld/skilld/sandbox/skillcache"
)

// Name is the provider's name.
const Name = "bwrap"

// DefaultUID and DefaultGID are nobody and nogroup on Debian: the user
// commands run as when the server runs as root.
const (
	DefaultUID = 65534
	DefaultGID = 65534
)

// Config configures the provider.
type Config struct {
	// Root holds the sandboxes, one folder per sandbox; created with mode
	// 0700.
	Root string
	// CacheDir holds the skill cache; created with mode 0700.
	CacheDir string
	// UID and GID are the host user and group commands run as when this
	// process is root (default nobody/nogroup, 65534). They must not be 0.
	UID, GID int
	// Limits are the default limits of every command.
	Limits sandbox.Limits
	// ReadOnlyPaths are extra host folders bound read-only at the same
	// place (tools installed under /opt, say).
	ReadOnlyPaths []string
	// Bwrap is the bwrap program (default: "bwrap" on PATH).
	Bwrap string
}

// Provider runs sandboxes under bubblewrap.
type Provider struct {
	cfg      Config
	bwrap    string
	setpriv  string
	root     bool
	uid, gid int
	system   []string
	limits   sandbox.Limits
	controls *proc.Controls
	cache    *skillcache.Cache
}

var _ sandbox.Provider = (*Provider)(nil)

// New checks that bubblewrap works here and returns the provider. When it
// does not, the error is EUNAVAILABLE and says how to fix it.
func New(ctx context.Context, cfg Config) (*Provider, error) {
	if cfg.Root == "" || cfg.CacheDir == "" {
		return nil, skilld.Errorf(skilld.EINVALID, "bwrap: Root and CacheDir are required")
	}
	p := &Provider{cfg: cfg, root: os.Geteuid() == 0, uid: cfg.UID, gid: cfg.GID}
	if p.uid == 0 && p.gid == 0 {
		p.uid, p.gid = DefaultUID, DefaultGID
	}
	if p.root && (p.uid == 0 || p.gid == 0) {
		return nil, skilld.Errorf(skilld.EINVALID, "bwrap: commands must not run as uid or gid 0 (got %d:%d)", p.uid, p.gid)
	}
	var err error
	if p.bwrap, err = exec.LookPath(cmp.Or(cfg.Bwrap, "bwrap")); err != nil {
		return nil, unavailable("bubblewrap (bwrap) is not installed", "install it (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)")
	}
	if p.root {
		if p.setpriv, err = exec.LookPath("setpriv"); err != nil || !strings.HasPrefix(p.setpriv, "/usr/") {
			return nil, unavailable("util-linux's setpriv is not under /usr (it drops to an unprivileged user inside the sandbox)", "install util-linux")
		}
	}
	for _, ro := range cfg.ReadOnlyPaths {
		if !filepath.IsAbs(ro) {
			return nil, skilld.Errorf(skilld.EINVALID, "bwrap: read-only path %q must be absolute", ro)
		}
	}
	p.system = systemArgs(cfg.ReadOnlyPaths)
	p.limits = cfg.Limits.WithDefaults()
	if err := os.MkdirAll(cfg.Root, 0o700); err != nil {
		return nil, fmt.Errorf("bwrap: %w", err)
	}
	if err := os.Chmod(cfg.Root, 0o700); err != nil {
		return nil, fmt.Errorf("bwrap: %w", err)
	}
	if p.cache, err = skillcache.New(cfg.CacheDir); err != nil {
		return nil, err
	}
	p.controls = proc.Detect()
	if err := p.probe(ctx); err != nil {
		p.controls.Close()
		return nil, err
	}
	return p, nil
}

func unavailable(what, fix string) error {
	return skilld.Errorf(skilld.EUNAVAILABLE, "skill scripts cannot run in a sandbox here: %s; %s, or run skilld with --sandbox unsafe-host on a machine where skills are trusted (see docs/SANDBOX.md)", what, fix)
}

// probe runs `true` in a throwaway sandbox, so a machine where bubblewrap
// cannot make namespaces is found at start, not at the first task.
func (p *Provider) probe(ctx context.Context) error {
	var b [4]byte
	rand.Read(b[:])
	s, err := p.Create(ctx, sandbox.CreateParams{ID: ".probe-" + hex.EncodeToString(b[:])})
	if err != nil {
		return err
	}
	defer s.Destroy(context.WithoutCancel(ctx))
	res, err := s.Exec(ctx, sandbox.ExecParams{Command: "true"})
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("exit status %d: %s", res.ExitCode, res.Output)
	}
	if err != nil {
		return unavailable(fmt.Sprintf("bubblewrap does not start here (%s)", strings.TrimSpace(skilld.ErrorMessage(err))),
			"allow user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 23.10+ also kernel.apparmor_restrict_unprivileged_userns=0) or run skilld as root")
	}
	return nil
}

// Name is "bwrap".
func (p *Provider) Name() string { return Name }

// Info describes the isolation and the limits enforced here.
func (p *Provider) Info() sandbox.Info {
	// Without a pids cgroup, RLIMIT_NPROC counts a command's own
	// processes only where each command has its own user namespace (not
	// as root, where every sandbox shares the one unprivileged uid).
	info := sandbox.Info{Provider: Name, Isolated: true, Enforced: p.controls.Enforced(!p.root), Notes: p.controls.Notes()}
	if p.root {
		info.Notes = append(info.Notes, fmt.Sprintf("commands run as uid %d, gid %d (setpriv after bwrap's setup as root)", p.uid, p.gid))
	} else {
		info.Notes = append(info.Notes, fmt.Sprintf("commands run as this user (uid %d) in a user namespace of their own", os.Geteuid()))
	}
	return info
}

// Close removes the provider's cgroup folders. Sandboxes still alive are
// left as they are.
func (p *Provider) Close() error {
	p.controls.Close()
	return nil
}

// Create makes a sandbox folder: <root>/<id>/workspace, owned by the user
// commands run as, with an empty skills/ in it.
func (p *Provider) Create(_ context.Context, c sandbox.CreateParams) (sandbox.Sandbox, error) {
	if err := checkID(c.ID); err != nil {
		return nil, err
	}
	if err := sandbox.CheckEnv(c.Env); err != nil {
		return nil, err
	}
	f, err := hostfs.NewFolder(Name, p.cfg.Root, c.ID, c.Reopen)
	if err != nil {
		return nil, err
	}
	if p.root {
		// The workspace belongs to the user commands run as, and so does
		// every file the tools create in it.
		f.Owner = &hostfs.Owner{UID: p.uid, GID: p.gid}
		if err := os.Chown(f.Workspace, p.uid, p.gid); err != nil {
			if !c.Reopen {
				f.Destroy(context.Background())
			}
			return nil, fmt.Errorf("bwrap: creating the sandbox: %w", err)
		}
	}
	s := &sb{Folder: f, p: p, network: c.Network, env: sandbox.MergeEnv(sandbox.BaseEnv(), c.Env), limits: c.Limits.Or(p.limits), mounts: map[string]mount{}}
	f.Mounts = s.mountDirs
	return s, nil
}

// checkID allows the provider's own probe name besides sandbox.CheckID's.
func checkID(id string) error {
	if strings.HasPrefix(id, ".probe-") {
		return sandbox.CheckID(strings.TrimPrefix(id, ".probe-"))
	}
	return sandbox.CheckID(id)
}
