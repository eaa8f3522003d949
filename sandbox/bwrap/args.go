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
// secrets readable by the user commands run as).
var etcEntries = []string{
	"passwd", "group", "hosts", "host.conf", "nsswitch.conf", "resolv.conf", "gai.conf",
	"protocols", "services", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives",
	"ssl", "ca-certificates", "ca-certificates.conf", "pki", "crypto-policies",
	"localtime", "timezone", "mime.types", "os-release", "debian_version", "lsb-release",
	"profile", "bash.bashrc", "inputrc", "perl", "magic",
}

// systemArgs are the bind and symlink arguments for the host's system
// folders and extra read-only paths, computed once.
func systemArgs(extra []string) []string {
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
	// bwrap would create /etc for the binds below with mode 0700.
	a = append(a, "--perms", "0755", "--dir", "/etc")
	for _, e := range etcEntries {
		p := "/etc/" + e
		if _, err := os.Stat(p); err == nil {
			a = append(a, "--ro-bind", p, p)
		}
	}
	for _, p := range extra {
		a = append(a, "--ro-bind", p, p)
	}
	return a
}

// args builds bwrap's arguments for one command. statusFD receives bwrap's
// JSON status (the command's exit code), which tells a command's failure
// from the sandbox's.
func (s *sb) args(command string, statusFD int, mounts map[string]mount, lim sandbox.Limits) []string {
	p := s.p
	a := []string{
		"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--die-with-parent", "--new-session", "--hostname", "sandbox",
		"--json-status-fd", strconv.Itoa(statusFD),
	}
	if !s.network {
		a = append(a, "--unshare-net")
	}
	if p.root {
		// bwrap sets the sandbox up as root (so the task folder's
		// ancestors need not be open to anyone) and setpriv then clears
		// the bounding set and becomes the unprivileged user; these three
		// capabilities exist only until then.
		a = append(a, "--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP")
	} else {
		a = append(a, "--unshare-user", "--disable-userns", "--cap-drop", "ALL")
	}
	a = append(a, p.system...)
	a = append(a,
		"--proc", "/proc", "--dev", "/dev",
		"--size", strconv.FormatInt(lim.Memory, 10), "--tmpfs", "/tmp",
		"--bind", s.Workspace, sandbox.Workdir,
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
		a = append(a, "--ro-bind", mounts[name].dir, filepath.Join(sandbox.Workdir, sandbox.SkillsDir, name))
	}
	a = append(a, "--remount-ro", sandbox.Workdir+"/"+sandbox.SkillsDir, "--chdir", sandbox.Workdir, "--clearenv")
	for _, kv := range s.env {
		k, v, _ := strings.Cut(kv, "=")
		a = append(a, "--setenv", k, v)
	}
	a = append(a, "--")
	if p.root {
		id := strconv.Itoa(p.uid)
		a = append(a, p.setpriv, "--reuid="+id, "--regid="+strconv.Itoa(p.gid), "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--")
	} else {
		// In the command's own user namespace RLIMIT_NPROC counts only
		// its processes (as root every sandbox shares one uid, so only
		// the pids cgroup bounds processes there).
		a = append(a, p.controls.NprocPrefix(lim.Processes)...)
	}
	return append(a, "/bin/sh", "-c", command)
}
