// Package bwrap is the default sandbox provider on Linux: every command runs
// under bubblewrap in new user, PID, IPC, UTS, cgroup, mount and network
// namespaces (the network reached only through an allowlist proxy, when
// the agent may use it: package egress), with its own /proc, /dev,
// /tmp and /dev/shm, read-only system folders, the task folder as the only
// writable path that outlives it at /workspace, placed skills bound
// read-only from the skill cache, no capabilities, no_new_privs, a
// system-call filter (package seccomp), a minimal environment and an
// unprivileged user. When the command ends, its PID namespace ends with
// it, so nothing it started survives, however it detached.
//
// Nothing of the sandbox's setup runs with privilege on a tenant's behalf.
// As root, the server starts each command already as the task's own host
// uid (one per task, from a range: package uidpool), and bubblewrap runs
// unprivileged from there, binding what it needs from the hub (hub.go),
// so the work directory stays in folders only root can enter. The agent's
// environment reaches the final command only. As root, each task's
// workspace is also a mount of its own, nosuid and nodev, and, where the
// machine allows, an ext4 file system of a bounded size (package volume).
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

	"golang.org/x/sys/unix"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/sandbox"
	"github.com/skilld/skilld/sandbox/deps"
	"github.com/skilld/skilld/sandbox/internal/hostfs"
	"github.com/skilld/skilld/sandbox/internal/proc"
	"github.com/skilld/skilld/sandbox/internal/uidpool"
	"github.com/skilld/skilld/sandbox/internal/volume"
	"github.com/skilld/skilld/sandbox/seccomp"
	"github.com/skilld/skilld/sandbox/skillcache"
)

// Name is the provider's name.
const Name = "bwrap"

// SandboxUID and SandboxGID are a command's ids inside its user namespace,
// named "sandbox" in the sandbox's own /etc/passwd. In the host's view they
// are the task's own uid (a root server) or the server's (any other).
const (
	SandboxUID = 1000
	SandboxGID = 1000
)

// The default host uids of a root server's sandboxes: 65,536 ids from
// 0x70000000, in the span systemd leaves unassigned between its container
// ranges and its foreign-image range.
const (
	DefaultUIDFirst = 0x70000000
	DefaultUIDCount = 65536
)

// DefaultDisk is each task's workspace size where it can be limited.
const DefaultDisk = 2 << 30

// UIDRange is a span of host uids.
type UIDRange = uidpool.Range

// ParseUIDRange reads "FIRST-LAST".
func ParseUIDRange(s string) (UIDRange, error) { return uidpool.ParseRange(s) }

// Config configures the provider.
type Config struct {
	// Root holds the sandboxes, one folder per sandbox; created with mode
	// 0700.
	Root string
	// CacheDir holds the skill cache; created with mode 0700.
	CacheDir string
	// UIDs are the host uids (and gids) a root server runs sandboxes as,
	// one per sandbox (default DefaultUIDFirst, DefaultUIDCount). A
	// server not running as root runs them as its own uid.
	UIDs UIDRange
	// Disk is each workspace's size limit in bytes. 0 takes DefaultDisk
	// where this machine can enforce it and none where it cannot (Info
	// says which); a positive limit must be enforceable, else New fails
	// with EUNAVAILABLE naming what is missing; negative means no limit.
	Disk int64
	// Limits are the default limits of every command.
	Limits sandbox.Limits
	// ReadOnlyPaths are extra host folders bound read-only at the same
	// place (tools installed under /opt, say) in the host's root. Commands
	// see them with the permissions they have for any other user.
	ReadOnlyPaths []string
	// Roots are the root file systems commands may run on, the first the
	// default; none is the host's own system folders (HostRoot).
	Roots []Root
	// Deps configures the dependency layers of placed skills.
	Deps DepsConfig
	// Bwrap is the bwrap program (default: "bwrap" on PATH).
	Bwrap string
}

// Provider runs sandboxes under bubblewrap.
type Provider struct {
	cfg       Config
	bwrap     string
	root      bool
	roots     []*rootView
	limits    sandbox.Limits
	controls  *proc.Controls
	cache     *skillcache.Cache
	uids      *uidpool.Pool // as root
	hub       *hub          // as root
	deps      *deps.Store
	builds    builds
	vol       volume.Support
	disk      int64  // each workspace's default size; 0: not limited
	templates string // the folder of the workspaces' empty file systems (as root)
	notes     []string
	// Read by bubblewrap for every command, from a description of its
	// own (see reopen): the system-call filter (nil where there is none).
	filter *os.File
}

var (
	_ sandbox.Provider = (*Provider)(nil)
	_ sandbox.Lister   = (*Provider)(nil)
)

// New checks that bubblewrap works here and returns the provider. When it
// does not, the error is EUNAVAILABLE and says how to fix it.
func New(ctx context.Context, cfg Config) (*Provider, error) {
	if cfg.Root == "" || cfg.CacheDir == "" {
		return nil, skilld.Errorf(skilld.EINVALID, "bwrap: Root and CacheDir are required")
	}
	if cfg.UIDs.Count == 0 {
		cfg.UIDs = UIDRange{First: DefaultUIDFirst, Count: DefaultUIDCount}
	}
	p := &Provider{cfg: cfg, root: os.Geteuid() == 0}
	p.builds.init()
	var err error
	if p.bwrap, err = exec.LookPath(cmp.Or(cfg.Bwrap, "bwrap")); err != nil {
		return nil, unavailable("bubblewrap (bwrap) is not installed", "install it (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)")
	}
	for _, ro := range cfg.ReadOnlyPaths {
		if !filepath.IsAbs(ro) {
			return nil, skilld.Errorf(skilld.EINVALID, "bwrap: read-only path %q must be absolute", ro)
		}
	}
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
	if err := cfg.Deps.Indexes.Check(); err != nil {
		return nil, err
	}
	if p.deps, err = deps.Open(cmp.Or(cfg.Deps.Dir, filepath.Join(filepath.Dir(cfg.CacheDir), "deps")), cfg.Deps.CacheSize); err != nil {
		return nil, err
	}
	if err := p.start(ctx); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// start makes what the provider holds (as root, its uid pool and hub; its
// sealed files; its cgroup folders) and probes the machine. The caller
// closes the provider when it fails.
func (p *Provider) start(ctx context.Context) error {
	var err error
	if p.root {
		if p.uids, err = uidpool.New(filepath.Join(p.cfg.Root, ".uids"), p.cfg.UIDs); err != nil {
			return err
		}
		p.uids.Sweep(func(id string) bool {
			_, err := os.Lstat(filepath.Join(p.cfg.Root, id))
			return err == nil
		})
		if p.hub, err = openHub(); err != nil {
			return err
		}
	}
	if err := p.detectDisk(ctx); err != nil {
		return err
	}
	if err := p.openFiles(); err != nil {
		return err
	}
	p.controls = proc.Detect()
	if p.roots, err = roots(p.cfg, p.controls.Prlimit(), p.hub, p.vol); err != nil {
		return err
	}
	return p.probe(ctx)
}

// detectDisk decides, from what this machine offers and what was asked,
// how large workspaces are. As root, workspaces are mounts (in the hub):
// a machine where root cannot mount cannot run sandboxes.
func (p *Provider) detectDisk(ctx context.Context) error {
	p.vol = volume.Detect()
	if p.root && p.vol.Err == nil {
		// Templates sit beside the workspaces' images, on their file
		// system, in a folder of this process's: servers and workers
		// sharing the sandboxes' folder each make their own.
		sweepOwned(p.cfg.Root, ".templates-", os.RemoveAll)
		dir, err := mkdirOwned(p.cfg.Root, ".templates-", 0o700)
		if err != nil {
			return fmt.Errorf("bwrap: %w", err)
		}
		p.templates = dir
		p.vol = p.vol.WithTemplates(dir)
	}
	if p.root {
		if err := p.probeVolume(ctx, false); err != nil {
			return unavailable(fmt.Sprintf("a root server mounts each task's workspace, and mounting fails here (%v)", err), "give skilld CAP_SYS_ADMIN")
		}
	}
	switch {
	case p.cfg.Disk < 0:
		p.notes = append(p.notes, "disk: the workspace's size is not limited (turned off)")
		return nil
	case p.vol.Err == nil:
		if err := p.probeVolume(ctx, true); err != nil {
			p.vol.Err = err
		}
	}
	if p.vol.Err != nil {
		if p.cfg.Disk > 0 {
			return unavailable(fmt.Sprintf("a disk limit of %s per task was asked for, and this machine cannot enforce one (%v)", sandbox.SizeText(p.cfg.Disk), p.vol.Err),
				"run skilld as root on a machine with loop devices and mkfs.ext4, or start it without --sandbox-disk")
		}
		p.notes = append(p.notes, fmt.Sprintf("disk: the workspace's size is NOT limited: %v; a task can fill the file system of the work directory", p.vol.Err))
		return nil
	}
	p.disk = cmp.Or(p.cfg.Disk, DefaultDisk)
	return nil
}

// probeVolume makes, mounts and removes a small workspace volume (or, for
// bind, a nosuid mount of a folder), so a machine that cannot is found at
// start.
func (p *Provider) probeVolume(ctx context.Context, sized bool) error {
	dir, err := os.MkdirTemp(p.cfg.Root, ".probe-volume-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ws := filepath.Join(dir, "workspace")
	if err := os.Mkdir(ws, 0o755); err != nil {
		return err
	}
	if sized {
		err = p.vol.Create(ctx, filepath.Join(dir, imageName), ws, volume.Spec{Size: volume.MinSize})
	} else {
		err = p.vol.Bind(ws, ws, false)
	}
	if err != nil {
		return err
	}
	return volume.Unmount(ws)
}

func unavailable(what, fix string) error {
	return skilld.Errorf(skilld.EUNAVAILABLE, "skill scripts cannot run in a sandbox here: %s; %s, or run skilld with --sandbox unsafe-host on a machine where skills are trusted (see docs/SANDBOX.md)", what, fix)
}

// passwd and group name the sandbox's users: nothing of the host's.
const (
	passwd = "root:x:0:0:root:/root:/usr/sbin/nologin\nsandbox:x:1000:1000:sandbox:/workspace:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
	group  = "root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n"
)

// openFiles makes the sealed in-memory file bubblewrap reads for every
// command: the system-call filter.
func (p *Provider) openFiles() error {
	prog, err := seccomp.Program()
	if err != nil {
		p.notes = append(p.notes, "NO system-call filter: "+err.Error())
		return nil
	}
	p.filter, err = sealed("skilld-seccomp", prog)
	return err
}

// sealed is an in-memory file holding data that nobody can change.
func sealed(name string, data []byte) (*os.File, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("bwrap: %w", err)
	}
	f := os.NewFile(uintptr(fd), name)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return nil, fmt.Errorf("bwrap: %w", err)
	}
	if _, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE|unix.F_SEAL_SEAL); err != nil {
		f.Close()
		return nil, fmt.Errorf("bwrap: %w", err)
	}
	return f, nil
}

// reopen opens f again, from its start: bubblewrap reads a descriptor to
// its end, and commands run side by side.
func reopen(f *os.File) (*os.File, error) {
	return os.Open(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
}

// probe runs `true` in a throwaway sandbox on each root, so a machine where
// bubblewrap cannot make namespaces, or a root it cannot run, is found at
// start, not at the first task.
func (p *Provider) probe(ctx context.Context) error {
	for _, r := range p.roots {
		if err := p.probeRoot(ctx, r.Name); err != nil {
			if len(p.roots) > 1 || r.Dir != "/" {
				return fmt.Errorf("the root file system %q: %w", r.Name, err)
			}
			return err
		}
	}
	return nil
}

func (p *Provider) probeRoot(ctx context.Context, root string) error {
	var b [4]byte
	rand.Read(b[:])
	s, err := p.Create(ctx, sandbox.CreateParams{ID: ".probe-" + hex.EncodeToString(b[:]), Rootfs: root})
	if err != nil {
		return unavailable(fmt.Sprintf("a sandbox cannot be made here (%s)", strings.TrimSpace(skilld.ErrorMessage(err))), "check the work directory's file system")
	}
	defer s.Destroy(context.WithoutCancel(ctx))
	res, err := s.Exec(ctx, sandbox.ExecParams{Command: "true"})
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("exit status %d: %s", res.ExitCode, res.Output)
	}
	if err != nil {
		return unavailable(fmt.Sprintf("bubblewrap does not start here (%s)", strings.TrimSpace(skilld.ErrorMessage(err))),
			"allow unprivileged user namespaces, which every command runs in (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 23.10+ also kernel.apparmor_restrict_unprivileged_userns=0)")
	}
	return nil
}

// Name is "bwrap".
func (p *Provider) Name() string { return Name }

// Info describes the isolation and the limits enforced here.
func (p *Provider) Info() sandbox.Info {
	info := sandbox.Info{Provider: Name, Isolated: true, Enforced: p.controls.Enforced(true), Notes: p.controls.Notes(), Rootfs: p.roots[0].info()}
	if p.disk > 0 {
		info.Enforced[sandbox.LimitDisk] = diskText(p.disk)
	}
	if p.root {
		info.Notes = append(info.Notes, fmt.Sprintf("each task runs as a host uid of its own, from %s, in a user namespace of its own (uid %d inside)", p.uids.Range(), SandboxUID))
	} else {
		info.Notes = append(info.Notes, fmt.Sprintf("commands run as this user (uid %d) in a user namespace of their own (uid %d inside); tasks share that uid in the host's view", os.Geteuid(), SandboxUID))
		info.NoProxy = noProxy
	}
	if p.filter != nil {
		info.Notes = append(info.Notes, fmt.Sprintf("system-call filter: %d calls denied (keyrings, io_uring, perf, bpf, mounts, new user namespaces, …; docs/SANDBOX.md)", len(seccomp.Denied())))
	}
	info.Notes = append(info.Notes, p.notes...)
	return info
}

// noProxy is why a server that is not root gives commands no proxy: its
// listener is made in each command's network namespace, which takes
// CAP_SYS_ADMIN in the server's own.
const noProxy = "a task may reach the network only through its proxy, and a server that is not root cannot put the proxy in a command's network"

func diskText(size int64) string {
	return fmt.Sprintf("ext4 file system of %s and %d files per task (a loop-mounted sparse image), ENOSPC past it", sandbox.SizeText(size), volume.Inodes(size))
}

// Close stops the dependency builds still running (and waits for them),
// closes the provider's files and removes its cgroup folders and its hub.
// Sandboxes still alive keep their folders (a new provider reopens
// them) but can no longer run commands.
func (p *Provider) Close() error {
	p.builds.close() // before the controls its commands need
	if p.controls != nil {
		p.controls.Close()
	}
	closeRoots(p.roots)
	if p.templates != "" {
		os.RemoveAll(p.templates)
	}
	if p.hub != nil {
		p.hub.close()
	}
	if p.filter != nil {
		p.filter.Close()
	}
	return nil
}

// Create makes a sandbox folder, <root>/<id>/workspace, with an empty
// skills/ in it. As root, the sandbox gets a host uid of its own, which
// owns the workspace, and the workspace is a mount of its own.
func (p *Provider) Create(ctx context.Context, c sandbox.CreateParams) (sandbox.Sandbox, error) {
	if err := checkID(c.ID); err != nil {
		return nil, err
	}
	if err := sandbox.CheckEnv(c.Env); err != nil {
		return nil, err
	}
	disk, err := p.diskFor(c.Disk)
	if err != nil {
		return nil, err
	}
	root, err := p.rootNamed(c.Rootfs)
	if err != nil {
		return nil, err
	}
	net, err := newEgressPlan(c)
	if err != nil {
		return nil, err
	}
	if net != nil && !p.root {
		// The proxy's listener is made in each command's network namespace,
		// which takes CAP_SYS_ADMIN in the server's own.
		return nil, skilld.Errorf(skilld.EUNAVAILABLE, "%s; run skilld as root, or give the agent no config.sandbox.network", noProxy)
	}
	env := sandbox.BaseEnv()
	if net != nil {
		env = sandbox.MergeEnv(env, proxyEnv())
	}
	s := &sb{p: p, id: c.ID, root: root, egress: net, env: sandbox.MergeEnv(env, c.Env), limits: c.Limits.Or(p.limits), mounts: map[string]mount{}, disk: disk}
	f, err := hostfs.NewFolder(Name, p.cfg.Root, c.ID, hostfs.FolderOptions{Reopen: c.Reopen, Prepare: func(dir string, fresh bool) (string, *hostfs.Owner, error) {
		return s.prepare(ctx, dir, fresh)
	}})
	if err != nil {
		return nil, err
	}
	s.Folder = f
	f.Mounts = s.mountDirs
	return s, nil
}

// List returns the IDs of the sandboxes in Root.
func (p *Provider) List(context.Context) ([]string, error) { return hostfs.List(p.cfg.Root) }

// diskFor is the size of a new workspace for a request: the provider's,
// or less.
func (p *Provider) diskFor(asked int64) (int64, error) {
	if p.disk == 0 && p.vol.Err != nil {
		return 0, sandbox.CheckDisk(asked, p.vol.Err.Error())
	}
	if err := sandbox.CheckDisk(asked, ""); err != nil || asked == 0 {
		return p.disk, err
	}
	if p.disk > 0 {
		asked = min(asked, p.disk)
	}
	return max(asked, volume.MinSize), nil
}

// checkID allows the provider's own sandboxes (its probes, its builds of
// dependency layers) besides sandbox.CheckID's.
func checkID(id string) error {
	for _, own := range []string{".probe-", ".deps-"} {
		if rest, ok := strings.CutPrefix(id, own); ok {
			return sandbox.CheckID(rest)
		}
	}
	return sandbox.CheckID(id)
}
