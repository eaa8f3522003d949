// Package sandbox is the contract between the agent runtime and the places
// where a task's commands run. A Provider makes one Sandbox per task; the
// runtime runs shell commands in it (Exec), reads and writes its files for
// the in-process tools, places skill packages in it (Place) and removes it
// at the end (Destroy). Inside, the task's folder is always /workspace and
// placed skills are under /workspace/skills/<slug>-<hash8>, read-only.
//
// Providers: bwrap/ (bubblewrap, the default on Linux: namespaces, no view
// of the host, read-only skill mounts, per-command limits) and unsafehost/
// (plain host processes, for machines without user namespaces, only when an
// operator asks). sandboxtest/ is the conformance suite every provider
// passes; for isolating providers it includes the escape proofs.
//
// Errors carry skilld codes: EINVALID for a bad path or command, ENOTFOUND
// for a missing file, EFORBIDDEN for a write into skills/, ETOOLARGE for a
// file over a read cap, ECONFLICT for a sandbox ID in use, and EUNAVAILABLE
// when the provider cannot run commands on this machine.
package sandbox

import (
	"context"
	"io/fs"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
)

// Workdir is where the task's folder is inside every sandbox: commands
// start there, and file tools take paths relative to it (or absolute
// paths under it).
const Workdir = "/workspace"

// SkillsDir is the folder of the workspace that holds placed skills. It is
// read-only to the task: only Place adds to it.
const SkillsDir = "skills"

// Provider makes sandboxes. Implementations are safe for concurrent use.
type Provider interface {
	// Name identifies the provider in logs and events ("bwrap",
	// "unsafe-host").
	Name() string
	// Info says what the provider isolates and which limits it enforces,
	// and how, as detected on this machine.
	Info() Info
	// Create makes a new, empty sandbox. An ID already in use is
	// ECONFLICT (unless CreateParams.Reopen); a failure leaves nothing
	// behind.
	Create(ctx context.Context, p CreateParams) (Sandbox, error)
}

// CreateParams describe a new sandbox.
type CreateParams struct {
	// ID names the sandbox (a task ID): 1 to 128 letters, digits, '-' or
	// '_'.
	ID string
	// Network lets commands reach the network; without it they have only
	// their own loopback. An isolating provider lets them through an
	// allowlist proxy only: to the hosts of Allow, or, when Allow is
	// empty, to the public web (any public host on ports 80 and 443).
	// Providers that cannot isolate the network ignore both (Info.Isolated
	// is false).
	Network bool
	// Allow are the hosts commands may reach ("api.example.com",
	// "*.example.org", "example.com:8443", "127.0.0.1:9443").
	Allow []string
	// Env holds "NAME=value" pairs added to the minimal environment of
	// every command (PATH, HOME, TMPDIR, LANG). Nothing of the server's
	// own environment reaches a command otherwise.
	Env []string
	// Limits are the defaults for every Exec; zero fields take the
	// provider's defaults.
	Limits Limits
	// Disk bounds the workspace's size in bytes, below the provider's own
	// limit (a larger value gets the provider's); 0 takes the provider's.
	// A provider that cannot enforce a limit refuses a positive one
	// (EUNAVAILABLE); a negative one is EINVALID.
	Disk int64
	// Rootfs names the root file system commands run on, one the
	// provider was configured with ("" its default). A provider without
	// such roots refuses a name (EUNAVAILABLE).
	Rootfs string
	// Reopen takes over the sandbox of this ID if it exists — its
	// workspace files as the task left them — instead of refusing it: a
	// task resumed after a restart goes on in its own folder. Placed
	// skills are not kept: the task places them again.
	Reopen bool
}

// Sandbox is one task's sandbox. Methods are safe for concurrent use.
type Sandbox interface {
	// ID is the CreateParams.ID it was made with.
	ID() string
	// HostPath is the host folder behind /workspace, for operators
	// (printed by `skilld run --keep-sandbox`); "" when there is none on
	// this machine.
	HostPath() string
	// Exec runs command with sh -c in /workspace and waits for it. When a
	// limit stops it, the command and everything it started are killed
	// and Result.Limit names the limit; that is a result, not an error.
	// Errors are for commands that could not run at all.
	Exec(ctx context.Context, p ExecParams) (*Result, error)
	// Place commits pkg at dir ("skills/<name>") atomically and
	// read-only: either the whole package is there or nothing is. Placing
	// the same package at the same dir again is a no-op; a different
	// package at a dir in use is ECONFLICT.
	Place(ctx context.Context, dir string, pkg *pack.Package) error
	// Stat, ReadFile, WriteFile and List give the in-process tools the
	// task's view of /workspace, placed skills included, without following
	// any link out of it. Paths are cleaned with CleanPath. ReadFile reads
	// at most max bytes (ETOOLARGE beyond) of a regular file; WriteFile
	// replaces a file atomically, creating its folders, and refuses
	// anything under skills/ (EFORBIDDEN).
	Stat(ctx context.Context, path string) (FileInfo, error)
	ReadFile(ctx context.Context, path string, max int64) ([]byte, error)
	WriteFile(ctx context.Context, path string, data []byte) error
	// List returns the entries of a folder, sorted by name.
	List(ctx context.Context, path string) ([]FileInfo, error)
	// Destroy kills any command still running and removes the sandbox and
	// everything in it. It is idempotent.
	Destroy(ctx context.Context) error
}

// Described is a Sandbox that says what holds for it in particular (its
// own disk limit, say), beyond its provider's Info.
type Described interface {
	Info() Info
}

// Environments is a Sandbox that installs what a placed package's scripts
// import (requirements.txt; package.json with its lockfile), once per
// package, root file system and package index, for every sandbox that
// places the package, and shows it to the sandbox's later commands.
type Environments interface {
	// Environment readies the dependencies of pkg, placed at dir; nil
	// when pkg declares none. An install that fails is an error, with the
	// Environment saying what the installer printed last. While it
	// installs, progress (when not nil) hears how it goes, from the
	// calling goroutine.
	Environment(ctx context.Context, dir string, pkg *pack.Package, progress func(EnvironmentProgress)) (*Environment, error)
}

// EnvironmentProgress is how an install is going.
type EnvironmentProgress struct {
	// Elapsed is the time since the install began (it may have begun
	// for another sandbox).
	Elapsed time.Duration
	// Line is the installer's latest line; Lines counts its lines so far.
	Line  string
	Lines int
}

// Environment is what Environments readied.
type Environment struct {
	// Kinds are the ecosystems installed: "python", "node".
	Kinds []string
	// Key names the layer (shared by every sandbox of that package on
	// that root); Cached says it was built before.
	Key    string
	Cached bool
	// Duration is how long it took (mostly the install, when not cached).
	Duration time.Duration
	// Output is the installer's last lines.
	Output string
}

// Lister is a Provider that can list the sandboxes it keeps, so that a
// server can remove those of tasks that ended while it was down.
type Lister interface {
	// List returns the IDs of the sandboxes that exist.
	List(ctx context.Context) ([]string, error)
}

// CheckDisk refuses a negative CreateParams.Disk, and a positive one from
// a provider that cannot enforce it (why says what is missing).
func CheckDisk(disk int64, why string) error {
	switch {
	case disk < 0:
		return skilld.Errorf(skilld.EINVALID, "a disk limit must not be negative")
	case disk > 0 && why != "":
		return skilld.Errorf(skilld.EUNAVAILABLE, "a disk limit of %s was asked for, and this server cannot limit a task's disk space (%s)", SizeText(disk), why)
	}
	return nil
}

// FileInfo describes one entry of the workspace.
type FileInfo struct {
	// Path is relative to /workspace, slash-separated.
	Path    string
	Size    int64
	Mode    fs.FileMode
	ModTime time.Time
	// ReadOnly is set for placed skills' files and folders.
	ReadOnly bool
}

// Info describes a provider as detected on this machine.
type Info struct {
	Provider string `json:"provider"`
	// Isolated is true when commands cannot see or change the host beyond
	// /workspace (bwrap); false for unsafe-host.
	Isolated bool `json:"isolated"`
	// Enforced says, per limit, how it is enforced here ("cgroup v1
	// memory.limit_in_bytes, whole command"); a limit that is not enforced
	// is absent from it.
	Enforced map[string]string `json:"enforced"`
	// Notes are facts an operator should know (the uid commands run as, a
	// fallback in use).
	Notes []string `json:"notes,omitempty"`
	// Warning, when set, must be shown loudly: at start and on every task.
	Warning string `json:"warning,omitempty"`
	// NoProxy, when set, says why commands cannot be given hosts to reach
	// through a proxy here (CreateParams.Allow, ExecParams.Allow); "" when
	// they can, or when the provider does not isolate the network at all.
	NoProxy string `json:"no_proxy,omitempty"`
	// Rootfs is the root file system commands see: the provider's default
	// in its Info, a sandbox's own in the Info of a Described sandbox.
	Rootfs *RootfsInfo `json:"rootfs,omitempty"`
}

// RootfsInfo names a root file system and its content: "host" and
// "host" for the server's own system folders; an image's manifest digest
// ("sha256:…"); a directory's "tree-sha256:…" over its listing.
type RootfsInfo struct {
	Name   string `json:"name"`
	Digest string `json:"digest"`
}
