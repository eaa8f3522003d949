package bwrap

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/sandbox"
	"github.com/skilld/skilld/sandbox/deps"
	"github.com/skilld/skilld/sandbox/internal/hostfs"
	"github.com/skilld/skilld/sandbox/internal/proc"
	"github.com/skilld/skilld/sandbox/internal/volume"
)

var (
	_ sandbox.Sandbox   = (*sb)(nil)
	_ sandbox.Described = (*sb)(nil)
)

// imageName is the workspace's file system image in the sandbox's folder.
const imageName = "workspace.img"

// sb is one sandbox.
type sb struct {
	*hostfs.Folder
	p    *Provider
	id   string
	root *rootView
	// egress is the sandbox's network (nil: none).
	egress *egressPlan
	env    []string
	limits sandbox.Limits
	// uid is the host uid (and gid) the sandbox's commands run as; 0 when
	// the server is not root (they run as the server's own).
	uid int
	// live is the sandbox's folder in the hub (as root): what bwrap binds.
	live string
	// disk is the workspace's size limit; 0 when it has none.
	disk int64

	mu     sync.Mutex
	mounts map[string]mount // skill folder name → its cached copy
}

type mount struct {
	digest string
	// dir is the cached copy; bind is where bwrap finds it (dir, or its
	// read-only bind in the hub); deps is where bwrap finds the package's
	// dependency layer ("" when it has none), held by layer while the
	// sandbox lasts.
	dir, bind, deps string
	layer           *deps.Layer
}

// prepare makes the sandbox's workspace, <dir>/workspace. As root it is
// a mount of its own, nosuid and nodev: a volume of the sandbox's size
// (kept in <dir>/workspace.img) or the folder bound on itself, bound again
// in the hub for bwrap; and the sandbox gets a host uid of its own. Made
// fresh, or found again on reopen.
func (s *sb) prepare(ctx context.Context, dir string, fresh bool) (string, *hostfs.Owner, error) {
	p := s.p
	ws := filepath.Join(dir, "workspace")
	if !p.root {
		return ws, nil, hostfs.EnsureDir(ws, nil)
	}
	s.live = p.hub.sandbox(s.id)
	image := filepath.Join(dir, imageName)
	if fresh {
		uid, err := p.uids.Claim(s.id)
		if err != nil {
			return "", nil, err
		}
		s.uid = int(uid)
		if err := s.mountFresh(ctx, image, ws); err != nil {
			removeTree(s.live)
			volume.Unmount(ws)
			p.uids.Release(s.id, uid)
			return "", nil, err
		}
		return ws, &hostfs.Owner{UID: s.uid, GID: s.uid}, nil
	}
	// Reopened: mounted already (the machine kept its mounts), or mounted
	// again; the workspace keeps the size it was made with.
	want := s.disk
	s.disk = 0
	info, statErr := os.Stat(image)
	if statErr == nil {
		s.disk = info.Size()
	} else if want > 0 && unfinished(ws) {
		// The server stopped while making this workspace (its image is
		// renamed into place only when whole): nothing is in it yet, so
		// it is made now, with its limit.
		os.Remove(volume.TempName(image))
		if err := os.Remove(ws); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", nil, err
		}
		s.disk = want
		return s.prepare(ctx, dir, true)
	}
	if err := hostfs.EnsureDir(ws, nil); err != nil {
		return "", nil, err
	}
	var err error
	if statErr == nil {
		err = p.vol.Open(image, ws)
	} else {
		err = p.vol.Bind(ws, ws, false)
	}
	if err != nil {
		return "", nil, err
	}
	if info, err = os.Stat(ws); err != nil {
		return "", nil, err
	}
	uid := info.Sys().(*syscall.Stat_t).Uid
	kept, err := p.uids.Keep(s.id, uid)
	if err != nil {
		return "", nil, err
	}
	if !kept {
		// Its uid is gone (another sandbox holds it, or the folder was
		// made before uids were per sandbox): its files move to a new one.
		if uid, err = p.uids.Claim(s.id); err != nil {
			return "", nil, err
		}
		if err := chownTree(ws, int(uid)); err != nil {
			p.uids.Release(s.id, uid)
			return "", nil, err
		}
	}
	s.uid = int(uid)
	if err := s.mountLive(ws); err != nil {
		return "", nil, err
	}
	return ws, &hostfs.Owner{UID: s.uid, GID: s.uid}, nil
}

// unfinished reports whether ws is what a sandbox's creation leaves before
// its workspace is mounted: an empty folder, or nothing.
func unfinished(ws string) bool {
	entries, err := os.ReadDir(ws)
	return errors.Is(err, fs.ErrNotExist) || err == nil && len(entries) == 0 && !volume.Mounted(ws)
}

// mountFresh mounts a new sandbox's workspace at ws for its uid, and in
// the hub.
func (s *sb) mountFresh(ctx context.Context, image, ws string) error {
	p, uid := s.p, s.uid
	if err := os.Mkdir(ws, 0o700); err != nil {
		return err
	}
	if s.disk > 0 {
		if err := p.vol.Create(ctx, image, ws, volume.Spec{Size: s.disk, UID: uid, GID: uid}); err != nil {
			return err
		}
	} else {
		if err := os.Lchown(ws, uid, uid); err != nil {
			return err
		}
		if err := p.vol.Bind(ws, ws, false); err != nil {
			return err
		}
	}
	return s.mountLive(ws)
}

// mountLive binds the workspace ws in the sandbox's hub folder, which
// belongs to its uid.
func (s *sb) mountLive(ws string) error {
	live := filepath.Join(s.live, "workspace")
	if err := os.MkdirAll(live, 0o700); err != nil {
		return err
	}
	if err := os.Lchown(s.live, s.uid, s.uid); err != nil {
		return err
	}
	return s.p.vol.Bind(ws, live, false)
}

// chownTree gives every file and folder under dir to uid, following no
// link.
func chownTree(dir string, uid int) error {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer r.Close()
	return fs.WalkDir(r.FS(), ".", func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return r.Lchown(p, uid, uid)
	})
}

// Info is the provider's, with this sandbox's own disk limit.
func (s *sb) Info() sandbox.Info {
	info := s.p.Info()
	info.Rootfs = s.root.info()
	delete(info.Enforced, sandbox.LimitDisk)
	if s.disk > 0 {
		info.Enforced[sandbox.LimitDisk] = diskText(s.disk)
	}
	return info
}

func (s *sb) mountDirs() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(s.mounts))
	for name, m := range s.mounts {
		out[name] = m.dir
	}
	return out
}

// Exec runs the command in a new bubblewrap sandbox over the workspace.
func (s *sb) Exec(ctx context.Context, p sandbox.ExecParams) (*sandbox.Result, error) {
	ctx, lim, done, err := s.Begin(ctx, p, s.limits)
	if err != nil {
		return nil, err
	}
	defer done()
	s.mu.Lock()
	mounts := maps.Clone(s.mounts)
	s.mu.Unlock()
	if err := s.checkMountPoint(); err != nil {
		return nil, err
	}
	// /etc as its sources are now, kept until the command has ended.
	etc, release, err := s.root.etc.acquire()
	if err != nil {
		return nil, err
	}
	defer release()
	statusR, statusW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer statusR.Close()
	fds := &descriptors{}
	defer fds.close()
	fds.add(statusW)
	plan, err := s.egress.with(p.Allow)
	if err != nil {
		return nil, err
	}
	own := p.Env
	if plan != nil && s.egress == nil {
		if !s.p.root {
			return nil, skilld.Errorf(skilld.EUNAVAILABLE, "%s (asked for: %s); run skilld as root", noProxy, strings.Join(p.Allow, ", "))
		}
		// A sandbox without the network has no proxy variables of its
		// own: this command gets them.
		own = sandbox.MergeEnv(proxyEnv(), p.Env)
	}
	var proxied chan *commandProxy
	if plan != nil {
		// bwrap says where the sandbox's first process is (info), and
		// waits (block) until its proxy listens there.
		infoR, infoW, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		defer infoR.Close()
		blockR, blockW, err := os.Pipe()
		if err != nil {
			infoW.Close()
			return nil, err
		}
		fds.add(infoW)
		fds.add(blockR)
		proxied = make(chan *commandProxy, 1)
		go func() {
			cp, err := plan.start(infoR, blockW)
			if err != nil {
				// The command runs with no way out; its result says why.
				cp.events = append(cp.events, sandbox.EgressEvent{Reason: err.Error()})
			}
			proxied <- cp
		}()
	}
	argv, err := s.argv(p.Command, fds, etc, mounts, lim, plan != nil, own)
	if err != nil {
		return nil, err
	}
	status := make(chan int, 1)
	go func() { status <- readExitCode(statusR) }()
	spec := proc.Spec{
		Argv: argv,
		// bwrap's own environment is visible to the sandbox's pid 1: keep
		// it empty of anything but PATH and the command's own variables
		// (argv). It starts in / (the sandbox's folder is root's alone).
		Env: append([]string{"PATH=/usr/bin:/bin"}, own...), Dir: "/", ExtraFiles: fds.files,
		Limits: lim, Progress: p.Progress,
	}
	if s.uid != 0 {
		spec.Credential = &syscall.Credential{Uid: uint32(s.uid), Gid: uint32(s.uid), Groups: []uint32{}}
		spec.Nproc = true
	}
	out, err := s.p.controls.Run(ctx, spec)
	fds.close()
	var egress []sandbox.EgressEvent
	if proxied != nil {
		egress = (<-proxied).stop()
	}
	if err != nil {
		return nil, err
	}
	code := <-status
	res := &sandbox.Result{Output: out.Output, Truncated: out.Truncated, Limit: out.Limit, ExitCode: code, Limits: lim, Duration: out.Duration, Egress: egress}
	if code < 0 && out.Limit == "" {
		// bwrap itself failed before the command ran: its message is the
		// output.
		return nil, skilld.Errorf(skilld.EUNAVAILABLE, "the sandbox did not start: %s", strings.TrimSpace(string(out.Output)))
	}
	if res.Limit == "" {
		res.Limit = proc.LimitOfExit(code)
	}
	return res, nil
}

// descriptors are the files a command's bwrap gets, numbered from 3 in the
// order they are added.
type descriptors struct{ files []*os.File }

func (d *descriptors) add(f *os.File) string {
	d.files = append(d.files, f)
	return fmt.Sprint(2 + len(d.files))
}

// reopened adds a fresh description of one of the provider's sealed files.
func (d *descriptors) reopened(f *os.File) (string, error) {
	g, err := reopen(f)
	if err != nil {
		return "", err
	}
	return d.add(g), nil
}

func (d *descriptors) close() {
	for _, f := range d.files {
		f.Close()
	}
	d.files = nil
}

// readExitCode reads bwrap's JSON status stream to its end and returns the
// command's exit code, or -1 when bwrap never ran it.
func readExitCode(r *os.File) int {
	code := -1
	dec := json.NewDecoder(bufio.NewReader(r))
	for {
		var st struct {
			ExitCode *int `json:"exit-code"`
		}
		if err := dec.Decode(&st); err != nil {
			return code
		}
		if st.ExitCode != nil {
			code = *st.ExitCode
		}
	}
}

// checkMountPoint makes sure skills/ in the workspace is a plain folder
// before bwrap mounts over it: nothing a command or a tool does can leave
// something else there, but a sandbox that finds otherwise repairs it
// rather than follow it.
func (s *sb) checkMountPoint() error {
	p := filepath.Join(s.Workspace, sandbox.SkillsDir)
	info, err := os.Lstat(p)
	if err == nil && info.IsDir() {
		return nil
	}
	if err == nil {
		if err := os.Remove(p); err != nil {
			return fmt.Errorf("repairing %s/: %w", sandbox.SkillsDir, err)
		}
	}
	if err := os.Mkdir(p, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("repairing %s/: %w", sandbox.SkillsDir, err)
	}
	if s.uid != 0 {
		return os.Lchown(p, s.uid, s.uid)
	}
	return nil
}

// Place makes pkg visible at dir: a verified read-only copy in the skill
// cache, bound there in every later command. A warm placement writes
// nothing.
func (s *sb) Place(ctx context.Context, dir string, pkg *pack.Package) error {
	name, err := sandbox.CheckSkillDir(dir)
	if err != nil {
		return err
	}
	s.mu.Lock()
	m, ok := s.mounts[name]
	s.mu.Unlock()
	if err := s.Removed(); err != nil {
		return err
	}
	switch {
	case ok && m.digest == pkg.Digest():
		return nil
	case ok:
		return skilld.Errorf(skilld.ECONFLICT, "%s holds another package (%s)", dir, m.digest)
	}
	cached, err := s.p.cache.Dir(ctx, pkg)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.mounts[name]; ok {
		if m.digest != pkg.Digest() {
			return skilld.Errorf(skilld.ECONFLICT, "%s holds another package (%s)", dir, m.digest)
		}
		return nil
	}
	m = mount{digest: pkg.Digest(), dir: cached, bind: cached}
	if s.live != "" {
		// As root, bwrap reaches the copy through the hub.
		m.bind = filepath.Join(s.live, sandbox.SkillsDir, name)
		if err := os.MkdirAll(m.bind, 0o755); err != nil {
			return fmt.Errorf("placing %s: %w", dir, err)
		}
		if err := s.p.vol.Bind(cached, m.bind, true); err != nil {
			return fmt.Errorf("placing %s: %w", dir, err)
		}
	}
	s.mounts[name] = m
	return nil
}

// Destroy stops the sandbox's commands, takes its mounts away, removes its
// folders and gives its uid back.
func (s *sb) Destroy(ctx context.Context) error {
	s.Commands.Close()
	if s.live != "" {
		// The hub folder holds one mount, the workspace's.
		err := volume.UnmountKnown(s.live, filepath.Join(s.live, "workspace"))
		if err == nil {
			err = os.RemoveAll(s.live)
		}
		if err == nil {
			err = volume.Unmount(s.Workspace)
		}
		if err != nil {
			return fmt.Errorf("%s: removing sandbox %s: %w", Name, s.id, err)
		}
	}
	if err := s.Folder.Destroy(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	for _, m := range s.mounts {
		m.layer.Close()
	}
	s.mu.Unlock()
	if s.uid != 0 {
		s.p.uids.Release(s.id, uint32(s.uid))
	}
	return nil
}

// bindWorkspace is where bwrap finds the workspace: in the hub as root.
func (s *sb) bindWorkspace() string {
	if s.live != "" {
		return filepath.Join(s.live, "workspace")
	}
	return s.Workspace
}
