package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/sandbox"
	"github.com/skilld/skilld/sandbox/bwrap"
	"github.com/skilld/skilld/sandbox/deps"
	"github.com/skilld/skilld/sandbox/unsafehost"
)

// sandboxFlags choose and bound the sandboxes tasks run in (serve and run).
type sandboxFlags struct {
	provider  string
	network   bool
	memoryMiB int
	cpu       time.Duration
	processes int
	uid       int
	uids      string
	disk      string
	paths     pathList
	rootfs    pathList
	pyIndex   string
	npmReg    string
	envCache  string
	envWait   time.Duration
}

func (f *sandboxFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.provider, "sandbox", cmp.Or(os.Getenv("SKILLD_SANDBOX"), bwrap.Name),
		"where skill scripts run: bwrap (isolated, the default) or unsafe-host (no isolation; only for trusted skills\n"+
			"on machines without user namespaces) (env SKILLD_SANDBOX)")
	fs.BoolVar(&f.network, "sandbox-network", os.Getenv("SKILLD_SANDBOX_NETWORK") == "1",
		"let agents whose config.sandbox.network is true reach the network (env SKILLD_SANDBOX_NETWORK=1)")
	fs.IntVar(&f.memoryMiB, "sandbox-memory", envInt("SKILLD_SANDBOX_MEMORY", sandbox.DefaultMemory>>20),
		"memory limit of one command, in MiB (env SKILLD_SANDBOX_MEMORY)")
	fs.DurationVar(&f.cpu, "sandbox-cpu", envDuration("SKILLD_SANDBOX_CPU", sandbox.DefaultCPU),
		"CPU time limit of one command (env SKILLD_SANDBOX_CPU)")
	fs.IntVar(&f.processes, "sandbox-processes", envInt("SKILLD_SANDBOX_PROCESSES", sandbox.DefaultProcesses),
		"most processes and threads of one command (env SKILLD_SANDBOX_PROCESSES)")
	fs.IntVar(&f.uid, "sandbox-uid", envInt("SKILLD_SANDBOX_UID", 0), "replaced by --sandbox-uids (every task runs as a uid of its own)")
	fs.StringVar(&f.uids, "sandbox-uids", cmp.Or(os.Getenv("SKILLD_SANDBOX_UIDS"), (bwrap.UIDRange{First: bwrap.DefaultUIDFirst, Count: bwrap.DefaultUIDCount}).String()),
		"when skilld runs as root: the host user ids tasks run as, FIRST-LAST, one per task at a time (env SKILLD_SANDBOX_UIDS)")
	fs.StringVar(&f.disk, "sandbox-disk", os.Getenv("SKILLD_SANDBOX_DISK"),
		"the most disk space one task's workspace may use, such as 2GiB; off for no limit (default: 2GiB where\n"+
			"it can be enforced, which needs root, loop devices and mkfs.ext4; a value given must be enforced)\n(env SKILLD_SANDBOX_DISK)")
	f.paths = pathList{dirs: filepath.SplitList(os.Getenv("SKILLD_SANDBOX_PATHS"))}
	f.rootfs = pathList{dirs: filepath.SplitList(os.Getenv("SKILLD_SANDBOX_ROOTFS"))}
	fs.StringVar(&f.pyIndex, "python-index-url", os.Getenv("SKILLD_PYTHON_INDEX_URL"),
		"where skills' requirements.txt are installed from: a Python simple index (default pip's, PyPI)\n(env SKILLD_PYTHON_INDEX_URL)")
	fs.StringVar(&f.npmReg, "npm-registry", os.Getenv("SKILLD_NPM_REGISTRY"),
		"where skills' package.json (with a lockfile) are installed from (default npm's registry) (env SKILLD_NPM_REGISTRY)")
	fs.StringVar(&f.envCache, "env-cache-size", cmp.Or(os.Getenv("SKILLD_ENV_CACHE_SIZE"), "10GiB"),
		"the most disk the skills' installed dependencies keep, the least recently used going first (env SKILLD_ENV_CACHE_SIZE)")
	fs.DurationVar(&f.envWait, "env-wait", envDuration("SKILLD_ENV_WAIT", bwrap.DefaultDepsWait),
		"how long an activation waits for its skill's dependencies to install; past it the task goes on without them\n"+
			"and the install goes on for the next activation (env SKILLD_ENV_WAIT)")
	fs.Var(&f.rootfs, "sandbox-rootfs", "the root file system commands run on: a folder (skilld sandbox rootfs build makes one), an OCI image\n"+
		"archive (docker save, podman save, skopeo oci-archive:; unpacked once), or host (the host's /usr, the default);\n"+
		"repeatable as NAME=REF, the first the default, for agents to pick with config.sandbox.rootfs\n(env SKILLD_SANDBOX_ROOTFS, separated by colons)")
	fs.Var(&f.paths, "sandbox-path", "a host folder to show read-only at the same place in sandboxes (tools under /opt, say);\n"+
		"repeatable (env SKILLD_SANDBOX_PATHS, separated by colons)")
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return n
	}
	return def
}

func envDuration(name string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(name)); err == nil {
		return d
	}
	return def
}

// check refuses settings that cannot work, before anything is opened.
func (f *sandboxFlags) check() error {
	switch {
	case f.provider != bwrap.Name && f.provider != unsafehost.Name:
		return skilld.Errorf(skilld.EINVALID, "--sandbox %q: use %s or %s (a task's folder is chosen by skilld: see --keep-sandbox and --work-dir)", f.provider, bwrap.Name, unsafehost.Name)
	case f.memoryMiB < 16:
		return skilld.Errorf(skilld.EINVALID, "--sandbox-memory %d: give at least 16 (MiB)", f.memoryMiB)
	case f.cpu < time.Second:
		return skilld.Errorf(skilld.EINVALID, "--sandbox-cpu %s: give at least 1s", f.cpu)
	case f.processes < 8:
		return skilld.Errorf(skilld.EINVALID, "--sandbox-processes %d: give at least 8", f.processes)
	case f.uid != 0:
		return skilld.Errorf(skilld.EINVALID, "--sandbox-uid (SKILLD_SANDBOX_UID) was replaced by --sandbox-uids FIRST-LAST: every task now runs as a host uid of its own from that range")
	}
	if _, err := bwrap.ParseUIDRange(f.uids); err != nil {
		return skilld.Errorf(skilld.EINVALID, "--sandbox-uids: %s", skilld.ErrorMessage(err))
	}
	if _, err := f.diskLimit(); err != nil {
		return err
	}
	if _, err := parseRootfs(f.rootfs.dirs); err != nil {
		return err
	}
	if err := f.indexes().Check(); err != nil {
		return err
	}
	if _, err := sandbox.ParseSize(f.envCache); err != nil {
		return skilld.Errorf(skilld.EINVALID, "--env-cache-size: %s", skilld.ErrorMessage(err))
	}
	if f.envWait < time.Second || f.envWait > sandbox.MaxTimeout {
		return skilld.Errorf(skilld.EINVALID, "--env-wait %s: give between 1s and %s (an install runs at most %[2]s)", f.envWait, sandbox.MaxTimeout)
	}
	return nil
}

func (f *sandboxFlags) indexes() deps.Indexes { return deps.Indexes{Python: f.pyIndex, NPM: f.npmReg} }

// diskLimit is --sandbox-disk for the provider: 0 unset (the default where
// it can be enforced), -1 off, else the bytes asked for.
func (f *sandboxFlags) diskLimit() (int64, error) {
	switch strings.ToLower(strings.TrimSpace(f.disk)) {
	case "":
		return 0, nil
	case "off", "none", "0":
		return -1, nil
	}
	n, err := sandbox.ParseSize(f.disk)
	if err == nil && n < 8<<20 {
		err = skilld.Errorf(skilld.EINVALID, "give at least 8MiB")
	}
	if err != nil {
		return 0, skilld.Errorf(skilld.EINVALID, "--sandbox-disk %q: %s", f.disk, skilld.ErrorMessage(err))
	}
	return n, nil
}

func (f *sandboxFlags) limits() sandbox.Limits {
	return sandbox.Limits{Memory: int64(f.memoryMiB) << 20, CPU: f.cpu, Processes: f.processes}
}

// sandboxes is an opened provider and how to close it.
type sandboxes struct {
	sandbox.Provider
	close func() error
}

// open returns the provider, its sandboxes under root and (for bwrap) its
// skill cache in cacheDir. For unsafe-host it prints the provider's
// warning to w first.
func (f *sandboxFlags) open(ctx context.Context, w io.Writer, root, cacheDir string) (*sandboxes, error) {
	if f.provider == unsafehost.Name {
		if len(f.rootfs.dirs) > 0 {
			return nil, skilld.Errorf(skilld.EUNAVAILABLE, "--sandbox-rootfs: unsafe-host runs commands on the host itself and cannot give them another root file system; use --sandbox bwrap")
		}
		if disk, _ := f.diskLimit(); disk > 0 {
			return nil, skilld.Errorf(skilld.EUNAVAILABLE, "--sandbox-disk %s: unsafe-host runs commands in a plain folder of the host and cannot limit its size; use --sandbox bwrap as root, or leave --sandbox-disk out", f.disk)
		}
		p, err := unsafehost.New(unsafehost.Config{Root: root, Limits: f.limits()})
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(w, "skilld: WARNING: %s\n", p.Info().Warning)
		return &sandboxes{p, p.Close}, nil
	}
	uids, _ := bwrap.ParseUIDRange(f.uids)
	disk, _ := f.diskLimit()
	refs, _ := parseRootfs(f.rootfs.dirs)
	roots, err := openRoots(ctx, w, refs, filepath.Join(filepath.Dir(cacheDir), "rootfs"))
	if err != nil {
		return nil, err
	}
	envCache, _ := sandbox.ParseSize(f.envCache)
	p, err := bwrap.New(ctx, bwrap.Config{Root: root, CacheDir: cacheDir, UIDs: uids, Disk: disk, Limits: f.limits(), ReadOnlyPaths: f.paths.dirs, Roots: roots,
		Deps: bwrap.DepsConfig{Indexes: f.indexes(), CacheSize: envCache, Wait: f.envWait}})
	if err != nil {
		return nil, err
	}
	return &sandboxes{p, p.Close}, nil
}

// describe is the startup line about the sandbox: provider, how each limit
// is enforced, and the provider's notes.
func describe(info sandbox.Info) string {
	var b strings.Builder
	fmt.Fprintf(&b, "skilld: sandbox %s (isolated: %v)", info.Provider, info.Isolated)
	names := make([]string, 0, len(info.Enforced))
	for n := range info.Enforced {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(&b, "\n    %s: %s", n, info.Enforced[n])
	}
	for _, n := range []string{sandbox.LimitCPU, sandbox.LimitMemory, sandbox.LimitProcesses, sandbox.LimitDisk} {
		if _, ok := info.Enforced[n]; !ok {
			fmt.Fprintf(&b, "\n    %s: NOT enforced on this machine", n)
		}
	}
	if info.Rootfs != nil {
		fmt.Fprintf(&b, "\n    root file system: %s (%s)", info.Rootfs.Name, info.Rootfs.Digest)
	}
	for _, n := range info.Notes {
		fmt.Fprintf(&b, "\n    note: %s", n)
	}
	return b.String()
}
