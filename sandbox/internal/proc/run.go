// Package proc runs one sandbox command under its limits and kills it, with
// everything it started, when it reaches one: wall-clock time, CPU time,
// memory, processes and output. It uses what the machine has, detected
// once: per-command cgroup v1 groups (memory, pids, cpuacct) where this
// process may create them, and per-process resource limits (CPU time and
// core size from the shell that joins the groups; the rest, and all of
// them without groups, from util-linux's prlimit).
package proc

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skilld/skilld/sandbox"
)

// Controls are the means of limiting commands found on this machine.
type Controls struct {
	cg      *cgroups
	prlimit string
	sh      string
	// shellLimits says sh's ulimit sets soft and hard CPU time and core
	// size: with cgroups, the shell that joins them sets those limits, and
	// prlimit is left for what only it sets (memory and processes where no
	// cgroup bounds them).
	shellLimits bool
	notes       []string
}

// Detect looks at what this machine offers; it never fails, but notes what
// it could not use.
func Detect() *Controls {
	closeOnExec()
	c := &Controls{}
	c.cg, c.notes = detectCgroups()
	if p, err := exec.LookPath("prlimit"); err == nil {
		c.prlimit = p
	} else {
		c.notes = append(c.notes, "prlimit (util-linux) not found: no per-process resource limits")
	}
	if p, err := exec.LookPath("sh"); err == nil {
		c.sh = p
	} else {
		c.sh = "/bin/sh"
	}
	if len(c.cg.parent) > 0 {
		c.shellLimits = shellSetsLimits(c.sh)
	}
	return c
}

// shellSetsLimits asks sh to set soft and hard CPU time and core size as
// a command's first process will, and to say what it set. (POSIX asks
// ulimit for -f alone; dash, bash, busybox and mksh all take these.)
func shellSetsLimits(sh string) bool {
	out, err := exec.Command(sh, "-c", `ulimit -S -t 7 && ulimit -H -t 8 && ulimit -c 0 && echo "$(ulimit -S -t) $(ulimit -H -t) $(ulimit -S -c) $(ulimit -H -c)"`).Output()
	return err == nil && string(out) == "7 8 0 0\n"
}

// closeOnExec marks every descriptor above standard error close-on-exec.
// Go opens its own files so, but a descriptor this process inherited
// open (from a shell or a supervisor) would otherwise pass to every
// command it starts, sandboxed ones included.
func closeOnExec() {
	if unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC) == nil {
		return
	}
	entries, _ := os.ReadDir("/proc/self/fd")
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			unix.CloseOnExec(fd)
		}
	}
}

// Close removes the cgroup folders of this process.
func (c *Controls) Close() { c.cg.close() }

// Notes are what Detect could not use, for the provider's Info.
func (c *Controls) Notes() []string { return slices.Clone(c.notes) }

func (c *Controls) has(ctl string) bool { _, ok := c.cg.parent[ctl]; return ok }

// NprocPrefix is what to put before a command, inside its own user
// namespace, so that RLIMIT_NPROC bounds its processes when there is no
// pids cgroup: nil when there is one, or no prlimit. (Set outside, before
// the namespace exists, the limit would count every process of the
// server's user on the host, and bwrap itself could not fork.) prlimit is
// the program's path inside the sandbox ("" when it has none there).
func (c *Controls) NprocPrefix(prlimit string, processes int) []string {
	if c.has(ctlPids) || prlimit == "" {
		return nil
	}
	return []string{prlimit, "--nproc=" + strconv.Itoa(processes), "--"}
}

// Prlimit is util-linux's prlimit on the host ("" when there is none).
func (c *Controls) Prlimit() string { return c.prlimit }

// Enforced says how each limit is enforced. nproc is whether the provider
// lets RLIMIT_NPROC count only the command's own processes (each command
// in its own user namespace).
func (c *Controls) Enforced(nproc bool) map[string]string {
	m := map[string]string{
		sandbox.LimitTimeout: "wall clock, every process of the command killed",
		sandbox.LimitOutput:  "output cut and the command killed",
	}
	switch {
	case c.has(ctlCPUAcct) && c.cpuRlimit():
		m[sandbox.LimitCPU] = "cgroup v1 cpuacct for the whole command, and RLIMIT_CPU for each process"
	case c.has(ctlCPUAcct):
		m[sandbox.LimitCPU] = "cgroup v1 cpuacct for the whole command"
	case c.cpuRlimit():
		m[sandbox.LimitCPU] = "RLIMIT_CPU for each process"
	}
	switch {
	case c.has(ctlMemory):
		m[sandbox.LimitMemory] = "cgroup v1 memory.limit_in_bytes for the whole command"
	case c.prlimit != "":
		m[sandbox.LimitMemory] = "RLIMIT_DATA for each process (no cgroup here)"
	}
	switch {
	case c.has(ctlPids):
		m[sandbox.LimitProcesses] = "cgroup v1 pids.max for the whole command"
	case nproc && c.prlimit != "":
		m[sandbox.LimitProcesses] = "RLIMIT_NPROC in the command's own user namespace"
	}
	return m
}

// cpuRlimit says whether each process of a command gets RLIMIT_CPU.
func (c *Controls) cpuRlimit() bool {
	return c.prlimit != "" || (len(c.cg.parent) > 0 && c.shellLimits)
}

// Spec is one command to run.
type Spec struct {
	// Argv is the program and its arguments.
	Argv       []string
	Env        []string
	Dir        string
	ExtraFiles []*os.File
	Limits     sandbox.Limits
	// Credential, when set, is the user the command starts as (a root
	// server's sandbox uid): from its first instruction, before it joins
	// its cgroups, which are made writable to that user for it.
	Credential *syscall.Credential
	// Nproc sets RLIMIT_NPROC to Limits.Processes where no pids cgroup
	// bounds processes. Only for a command starting as a uid of its own:
	// the limit counts every process of the uid on the host.
	Nproc bool
	// Progress, when set, is also given the output as it comes, all of
	// it (Limits.Output bounds only what is kept). Its errors are ignored,
	// and it must not block.
	Progress io.Writer
}

// Outcome is how the command ended.
type Outcome struct {
	Output    []byte
	Truncated bool
	// Limit names the limit that stopped the command, "" when none did.
	Limit string
	// State is the process's state; nil when it could not be waited for.
	State    *os.ProcessState
	Duration time.Duration
}

// tick is how often a running command's cgroup counters are read.
const tick = 20 * time.Millisecond

// joinScript moves the shell (single-threaded) into the command's cgroups,
// sets its CPU-time and core limits when asked, and then becomes the
// command, so every process it starts is in them from the first
// instruction. Its arguments: the CPU seconds ("" to leave the limits to
// prlimit), the number of tasks files (joinFiles), the files, then the
// command. The soft CPU limit sends SIGXCPU; a second later the hard one
// kills.
const joinScript = `cpu=$1 n=$2; shift 2; while [ "$n" -gt 0 ]; do echo 0 > "$1" || exit 125; shift; n=$((n-1)); done; ` +
	`if [ -n "$cpu" ]; then ulimit -S -t "$cpu" && ulimit -H -t $((cpu+1)) && ulimit -c 0 || exit 125; fi; exec "$@"`

// Run runs spec and waits for it. Cancelling ctx kills the command; the
// error is then ctx's.
func (c *Controls) Run(ctx context.Context, spec Spec) (*Outcome, error) {
	lim := spec.Limits
	var g *group
	if len(c.cg.parent) > 0 {
		var err error
		if g, err = c.cg.newGroup(lim.Memory, lim.Processes); err != nil {
			return nil, err
		}
		if spec.Credential != nil {
			if err := g.giveTo(int(spec.Credential.Uid), int(spec.Credential.Gid)); err != nil {
				g.remove()
				return nil, err
			}
		}
	}
	argv := spec.Argv
	cpu := max(int64((lim.CPU+time.Second-1)/time.Second), 1)
	// The shell in front (with cgroups) sets CPU time and core size when
	// it can: one program fewer to start before every command.
	inShell := g != nil && c.shellLimits
	var set []string
	if !inShell {
		set = append(set, fmt.Sprintf("--cpu=%d:%d", cpu, cpu+1), "--core=0")
	}
	if !c.has(ctlMemory) {
		set = append(set, "--data="+strconv.FormatInt(lim.Memory, 10))
	}
	if spec.Nproc && !c.has(ctlPids) {
		set = append(set, "--nproc="+strconv.Itoa(lim.Processes))
	}
	if c.prlimit != "" && len(set) > 0 {
		argv = append(append(append([]string{c.prlimit}, set...), "--"), argv...)
	}
	if g != nil {
		files := g.joinFiles()
		shellCPU := ""
		if inShell {
			shellCPU = strconv.FormatInt(cpu, 10)
		}
		pre := append([]string{c.sh, "-c", joinScript, "sh", shellCPU, strconv.Itoa(len(files))}, files...)
		argv = append(pre, argv...)
	}

	r, w, err := os.Pipe()
	if err != nil {
		g.removeIfAny()
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir, cmd.ExtraFiles = spec.Env, spec.Dir, spec.ExtraFiles
	cmd.Stdout, cmd.Stderr = w, w
	// Its own process group, so a kill reaches what it started; and killed
	// if this process dies first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: spec.Credential}
	start := time.Now()
	err = cmd.Start()
	w.Close()
	if err != nil {
		r.Close()
		g.removeIfAny()
		return nil, fmt.Errorf("starting %s: %w", argv[0], err)
	}

	out := &capped{limit: lim.Output, full: make(chan struct{})}
	copied := make(chan struct{})
	go func() {
		var dst io.Writer = out
		if spec.Progress != nil {
			dst = tee{out, spec.Progress}
		}
		io.Copy(dst, r)
		close(copied)
	}()
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()

	var limit string
	kill := func(why string) {
		if limit == "" {
			limit = why
		}
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Process.Kill()
	}
	timeout := time.NewTimer(lim.Timeout)
	defer timeout.Stop()
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	var ctxErr error
	// Each fires once: after it, the command is being killed.
	full, cancelled := out.full, ctx.Done()
wait:
	for {
		select {
		case <-exited:
			break wait
		case <-timeout.C:
			kill(sandbox.LimitTimeout)
		case <-full:
			kill(sandbox.LimitOutput)
			full = nil
		case <-cancelled:
			ctxErr = ctx.Err()
			kill("")
			cancelled = nil
		case <-ticker.C:
			if g != nil {
				if hit := g.exceeded(lim.CPU); hit != "" {
					kill(hit)
				}
			}
		}
	}
	d := time.Since(start)
	if g != nil {
		if limit == "" {
			limit = g.exceeded(lim.CPU)
		}
		g.killAll()
	} else {
		// Whatever is left of its process group goes too (with cgroups,
		// killAll already got every process, detached ones included).
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	select {
	case <-copied:
	case <-time.After(time.Second):
		// A process outside the group and any cgroup still holds the
		// pipe (possible only without isolation): stop reading.
		r.SetReadDeadline(time.Now())
		<-copied
	}
	r.Close()
	if ctxErr != nil {
		return nil, ctxErr
	}
	if limit == "" && exitCode(cmd.ProcessState) == 128+int(syscall.SIGXCPU) {
		limit = sandbox.LimitCPU
	}
	return &Outcome{Output: out.buf, Truncated: out.cut, Limit: limit, State: cmd.ProcessState, Duration: d}, nil
}

func (g *group) removeIfAny() {
	if g != nil {
		g.remove()
	}
}

// exitCode is the process's exit status, 128+n when signal n ended it.
func exitCode(st *os.ProcessState) int {
	if st == nil {
		return -1
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return st.ExitCode()
}

// ExitCode is exported for providers that read the status themselves.
func ExitCode(st *os.ProcessState) int { return exitCode(st) }

// LimitOfExit names the limit an exit status shows: a process ended by
// SIGXCPU reached its CPU time.
func LimitOfExit(code int) string {
	if code == 128+int(syscall.SIGXCPU) {
		return sandbox.LimitCPU
	}
	return ""
}

// tee writes to keep and shows to also, whose errors do not count.
type tee struct{ keep, also io.Writer }

func (t tee) Write(p []byte) (int, error) {
	t.also.Write(p)
	return t.keep.Write(p)
}

// capped keeps the first limit bytes written and signals full once when
// more arrive; it keeps accepting (and dropping) bytes so the writer is
// never blocked before it is killed.
type capped struct {
	mu    sync.Mutex
	buf   []byte
	limit int
	cut   bool
	full  chan struct{}
	once  sync.Once
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.limit - len(c.buf)
	if room >= len(p) {
		c.buf = append(c.buf, p...)
		return len(p), nil
	}
	c.buf = append(c.buf, p[:max(room, 0)]...)
	c.cut = true
	c.once.Do(func() { close(c.full) })
	return len(p), nil
}
