package bwrap

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/skilld/skilld/sandbox"
)

// systemDirs are bound read-only at the same place, or recreated as the
// same symbolic link on merged-/usr systems (/bin → usr/bin).
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// etcEntries are the parts of /etc a command may need: name lookups, the
// dynamic linker's cache, Debian's alternatives, certificates, time zones.
// The rest of /etc stays out of view (an operator's files there may hold
// secrets readable by the user commands run as); passwd and group are the
// sandbox's own.
var etcEntries = []string{
	"hosts", "host.conf", "nsswitch.conf", "resolv.conf", "gai.conf",
	"protocols", "services", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives",
	"ssl", "ca-certificates", "ca-certificates.conf", "pki", "crypto-policies",
	"localtime", "timezone", "mime.types", "os-release", "debian_version", "lsb-release",
	"profile", "bash.bashrc", "inputrc", "perl", "magic",
}

// systemArgs are the bind and symlink arguments for the host's system
// folders, computed once.
func systemArgs() []string {
	var a []string
	for _, d := range systemDirs {
		info, err := os.Lstat(d)
		switch {
		case err != nil:
		case info.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(d); err == nil {
				a = append(a, "--symlink", target, d)
			}
		case info.IsDir():
			a = append(a, "--ro-bind", d, d)
		}
	}
	return a
}

// hostEtc are the host's chosen /etc entries, resolved as a bind would.
func hostEtc() []etcEntry {
	out := make([]etcEntry, len(etcEntries))
	for i, e := range etcEntries {
		p := "/etc/" + e
		out[i] = etcEntry{name: e, src: p, bind: p, follow: true}
	}
	return out
}

// extraArgs bind the operator's extra read-only paths, after /etc so that
// one below it shows.
func extraArgs(extra []string) []string {
	var a []string
	for _, p := range extra {
		a = append(a, "--ro-bind", p, p)
	}
	return a
}

// argv is bwrap and its arguments for one command. fds collects the
// descriptors bwrap reads: its status stream (already added, number 3:
// the command's exit code, which tells a command's failure from the
// sandbox's) and the system-call filter. etc are the arguments that show
// /etc (etcView.acquire).
//
// proxied says the command has a proxy to wait for (its descriptors 4
// and 5); own are the command's own variables (ExecParams.Env), which
// bwrap's environment carries and which win over the sandbox's.
func (s *sb) argv(command string, fds *descriptors, etc []string, mounts map[string]mount, lim sandbox.Limits, proxied bool, own []string) ([]string, error) {
	p := s.p
	a := []string{p.bwrap,
		// A user namespace of its own, whatever the server's uid: inside
		// it the command is SandboxUID with no capability, and can make
		// no further one.
		"--unshare-user", "--uid", strconv.Itoa(SandboxUID), "--gid", strconv.Itoa(SandboxGID), "--disable-userns", "--cap-drop", "ALL",
		"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--die-with-parent", "--new-session", "--hostname", "sandbox",
		"--json-status-fd", "3",
		// Only its own loopback, whatever the agent may reach: that goes
		// through the proxy listening there.
		"--unshare-net",
	}
	if proxied {
		// The descriptors Exec added after the status stream.
		a = append(a, "--info-fd", "4", "--block-fd", "5")
	}
	if p.filter != nil {
		fd, err := fds.reopened(p.filter)
		if err != nil {
			return nil, err
		}
		a = append(a, "--seccomp", fd)
	}
	a = append(a, s.root.args...)
	a = append(a, etc...)
	a = append(a, s.root.extra...)
	size := strconv.FormatInt(lim.Memory, 10)
	a = append(a,
		"--proc", "/proc", "--dev", "/dev",
		// Its own /tmp and /dev/shm, writable by anyone (as /tmp is) and
		// counted against the command's memory.
		"--perms", "1777", "--size", size, "--tmpfs", "/tmp",
		"--perms", "1777", "--size", size, "--tmpfs", "/dev/shm",
		"--bind", s.bindWorkspace(), sandbox.Workdir,
		// skills/ is a fresh read-only folder holding only the placed
		// skills, whatever the task folder has under that name.
		"--size", "1048576", "--tmpfs", sandbox.Workdir+"/"+sandbox.SkillsDir,
	)
	names := make([]string, 0, len(mounts))
	for name := range mounts {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		a = append(a, "--ro-bind", mounts[name].bind, filepath.Join(sandbox.Workdir, sandbox.SkillsDir, name))
	}
	env := skillPaths(s.env, names)
	depsBinds, env := depsArgs(mounts, names, env)
	env = slices.DeleteFunc(env, func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.ContainsFunc(own, func(o string) bool { return strings.HasPrefix(o, name+"=") })
	})
	a = append(a, depsBinds...)
	// The root of the sandbox (and with it /etc) is read-only too: only
	// /workspace, /tmp and /dev/shm take writes.
	a = append(a, "--remount-ro", sandbox.Workdir+"/"+sandbox.SkillsDir, "--remount-ro", "/", "--chdir", sandbox.Workdir)
	// bwrap's own environment is only PATH and the command's secrets
	// (Exec), which the command inherits. The agent's variables reach the
	// command and nothing before it (bwrap runs as the server's user, and
	// reads its locale, say, from its environment): set by bwrap when the
	// command is what bwrap runs; otherwise handed past the helper in
	// front of it (prlimit, which sets the process limit inside the
	// namespace) as env's arguments. Secrets are never arguments: every
	// user of the host can read a process's arguments.
	prefix := p.controls.NprocPrefix(s.root.prlimit, lim.Processes)
	if s.uid != 0 || s.root.env == "" {
		// As root, the process limit is set before bwrap, on the task's
		// own uid; without env, none is set inside.
		prefix = nil
	}
	if prefix == nil {
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			a = append(a, "--setenv", k, v)
		}
		return append(append(a, "--"), "/bin/sh", "-c", command), nil
	}
	a = append(append(a, "--"), prefix...)
	a = append(append(a, s.root.env), env...)
	return append(a, "/bin/sh", "-c", command), nil
}

// skillPaths adds the placed skills' folders to PYTHONPATH and NODE_PATH
// (after what the agent set): a skill's scripts import their own modules
// (from scripts.office import …) as if run from the skill's folder,
// wherever the command runs.
func skillPaths(env []string, names []string) []string {
	dirs := make([]string, len(names))
	for i, n := range names {
		dirs[i] = sandbox.Workdir + "/" + sandbox.SkillsDir + "/" + n
	}
	out := slices.Clone(env)
	out = appendPath(out, "PYTHONPATH", dirs)
	return appendPath(out, "NODE_PATH", dirs)
}
