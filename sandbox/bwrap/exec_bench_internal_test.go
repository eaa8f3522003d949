package bwrap

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/skilld/skilld/sandbox"
)

// BenchmarkExecTrue is `true` in a sandbox with every limit in force
// ("sandbox"), beside its floor, "bare": `bwrap --unshare-all` with the
// host's system folders (/usr and the links to it) running `true`,
// started from Go as the user the sandbox's commands run as, with none of
// the sandbox's other mounts, limits or cgroups. "bwrap" sits between:
// bwrap with the sandbox's own arguments and descriptors, started from Go
// the same way, without the cgroups and resource limits: what the
// sandbox's configuration costs by itself. "clone-into-cgroup" and
// "per-task" are two other ways of starting a command, measured beside
// them (benchCloneIntoCgroup, benchPerTask).
func BenchmarkExecTrue(b *testing.B) {
	p := newProvider(b)
	sbox, err := p.Create(b.Context(), sandbox.CreateParams{ID: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer sbox.Destroy(b.Context())
	s := sbox.(*sb)
	uid := uint32(os.Geteuid())
	if s.uid != 0 {
		uid = uint32(s.uid)
	}
	cred := &syscall.Credential{Uid: uid, Gid: uid, Groups: []uint32{}}
	b.Run("sandbox", func(b *testing.B) {
		for b.Loop() {
			res, err := s.Exec(b.Context(), sandbox.ExecParams{Command: "true"})
			if err != nil || res.ExitCode != 0 {
				b.Fatal(res, err)
			}
		}
	})
	b.Run("bwrap", func(b *testing.B) {
		for b.Loop() {
			cmd, done := ownBwrap(b, s, "true", cred)
			out, err := cmd.CombinedOutput()
			done()
			if err != nil {
				b.Fatal(err, string(out))
			}
		}
	})
	b.Run("clone-into-cgroup", func(b *testing.B) { benchCloneIntoCgroup(b, s, cred) })
	b.Run("per-task", func(b *testing.B) { benchPerTask(b, s, cred) })
	// The system folders alone: a bind of the whole root would bind every
	// mount of the machine, which other processes add and remove.
	bare := []string{"--unshare-all"}
	for _, d := range systemDirs {
		if info, err := os.Lstat(d); err == nil && info.Mode()&os.ModeSymlink != 0 {
			target, _ := os.Readlink(d)
			bare = append(bare, "--symlink", target, d)
		} else if err == nil {
			bare = append(bare, "--ro-bind", d, d)
		}
	}
	bare = append(bare, "true")
	b.Run("bare", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command(p.bwrap, bare...)
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatal(err, string(out))
			}
		}
	})
}

// ownBwrap is bwrap with the sandbox's own arguments and descriptors
// running command, started from Go as cred, without the cgroups and
// resource limits Exec puts in front of it; done releases what it holds.
func ownBwrap(b *testing.B, s *sb, command string, cred *syscall.Credential) (*exec.Cmd, func()) {
	statusR, statusW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	fds := &descriptors{}
	fds.add(statusW)
	etc, release, err := s.root.etc.acquire()
	if err != nil {
		b.Fatal(err)
	}
	argv, err := s.argv(command, fds, etc, nil, s.limits, false, nil)
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir, cmd.ExtraFiles = []string{"PATH=/usr/bin:/bin"}, "/", fds.files
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	return cmd, func() {
		fds.close()
		release()
		statusR.Close()
	}
}

// benchCloneIntoCgroup is "bwrap" started straight into a cgroup v2 group
// of its own (CLONE_INTO_CGROUP), made and removed for each command as
// Exec makes its groups: what joining the cgroups costs when no process
// in front of bwrap has to move itself. It needs a cgroup2 hierarchy; on
// a machine whose memory and pids controllers sit on cgroup v1 (as on the
// one the numbers in docs/PERFORMANCE.md come from) the group limits
// nothing, so this measures the mechanism, not a sandbox.
func benchCloneIntoCgroup(b *testing.B, s *sb, cred *syscall.Credential) {
	root := ""
	for _, dir := range []string{"/sys/fs/cgroup/unified", "/sys/fs/cgroup"} {
		var st syscall.Statfs_t
		if syscall.Statfs(dir, &st) == nil && st.Type == cgroup2Magic {
			root = dir
			break
		}
	}
	if root == "" {
		b.Skip("no cgroup2 hierarchy is mounted")
	}
	parent, err := os.MkdirTemp(root, "skilld-bench-")
	if err != nil {
		b.Skip("cannot make a cgroup2 group:", err)
	}
	b.Cleanup(func() {
		// A group left by a failed command, then the parent.
		groups, _ := os.ReadDir(parent)
		for _, g := range groups {
			if g.IsDir() {
				os.Remove(filepath.Join(parent, g.Name()))
			}
		}
		os.Remove(parent)
	})
	n, busy := 0, 0
	for b.Loop() {
		n++
		dir := filepath.Join(parent, strconv.Itoa(n))
		if err := os.Mkdir(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		group, err := os.Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		cmd, done := ownBwrap(b, s, "true", cred)
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, int(group.Fd())
		out, err := cmd.CombinedOutput()
		done()
		group.Close()
		if err != nil {
			b.Fatal(err, string(out))
		}
		// The group empties a moment after bwrap is reaped (its own
		// children are still exiting); Exec's groups wait the same way.
		for err := os.Remove(dir); err != nil; err = os.Remove(dir) {
			if !errors.Is(err, syscall.EBUSY) {
				b.Fatal(err)
			}
			busy++
			time.Sleep(100 * time.Microsecond)
		}
	}
	b.ReportMetric(float64(busy)/float64(n), "busy/op")
}

// cgroup2Magic is CGROUP2_SUPER_MAGIC, statfs's type of a cgroup2 mount.
const cgroup2Magic = 0x63677270

// perTaskLoop stands for a command server inside one long-lived sandbox:
// for each line it reads it runs a command as Exec does (sh -c, here
// `true`), then kills every process the command left (kill -1 from a
// process of the sandbox's PID namespace reaches all of them but itself
// and bwrap, its init), so that nothing of one command runs on into the
// next, and answers with the exit status.
const perTaskLoop = `while read -r _; do /bin/sh -c true; s=$?; kill -9 -1 2>/dev/null; echo "$s"; done`

// benchPerTask is a command in a long-lived sandbox per task: bwrap with
// the sandbox's arguments is started once, outside the timing, and each
// operation is one command run inside it by perTaskLoop. It measures the
// way of starting commands the sandbox does not take (see the Exec
// section of docs/PERFORMANCE.md): the commands of a task would share one
// set of namespaces, cgroups and limits.
func benchPerTask(b *testing.B, s *sb, cred *syscall.Credential) {
	cmd, done := ownBwrap(b, s, perTaskLoop, cred)
	defer done()
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer cmd.Wait()
	defer in.Close()
	lines := bufio.NewReader(out)
	run := func() {
		if _, err := io.WriteString(in, "run\n"); err != nil {
			b.Fatal(err)
		}
		line, err := lines.ReadString('\n')
		if err != nil || line != "0\n" {
			b.Fatalf("the command in the long-lived sandbox answered %q, %v", line, err)
		}
	}
	// The sandbox's start with its first command, paid once per task.
	run()
	first := time.Since(start)
	for b.Loop() {
		run()
	}
	b.ReportMetric(float64(first.Microseconds())/1000, "first-ms")
}
