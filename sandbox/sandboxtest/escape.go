package sandboxtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skilld/skilld/sandbox"
)

// The escape proofs: each runs what a hostile skill script would try and
// checks, from the host, that it failed, and that the sandbox still works
// afterwards.

// serverEnvHidden: /proc/PID/environ shows the environment a process was
// started with, so a stand-in for the server is started with the canary
// in it; neither its environment nor the test process's command line may
// be read, nor may either process be seen at all.
func (s *suite) serverEnvHidden(t *testing.T) {
	server := exec.Command("sleep", "300")
	server.Env = []string{CanaryEnv + "=" + s.canary, "PATH=/usr/bin:/bin"}
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		server.Process.Kill()
		server.Wait()
	}()
	sb := s.create(t, sandbox.CreateParams{})
	self := filepath.Base(os.Args[0])
	res := mustExec(t, sb, fmt.Sprintf(`cat /proc/$PPID/environ /proc/1/environ 2>&1; for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do tr '\0' ' ' < $f 2>/dev/null; echo; done; cat /proc/$PPID/cmdline; env
for pid in %d %d; do test -e /proc/$pid && echo SEE""N:$pid; done`, server.Process.Pid, os.Getpid()), sandbox.Limits{})
	if strings.Contains(string(res.Output), s.canary) {
		t.Errorf("a command read the server's environment:\n%s", res.Output)
	}
	if strings.Contains(string(res.Output), self) {
		t.Errorf("a command saw the server's command line (%s):\n%s", self, res.Output)
	}
	if strings.Contains(string(res.Output), "SEEN:") {
		t.Errorf("a command saw host processes:\n%s", res.Output)
	}
}

// noCapabilities: a command holds no capability, cannot regain one, and
// cannot remount what it was given.
func (s *suite) noCapabilities(t *testing.T) {
	sb := s.create(t, sandbox.CreateParams{})
	res := mustExec(t, sb, "grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):' /proc/self/status; mount -o remount,rw /usr 2>/dev/null && echo REMOUNTED; id -u", sandbox.Limits{})
	out := string(res.Output)
	for _, c := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} {
		if !strings.Contains(out, c+":\t0000000000000000") {
			t.Errorf("%s is not empty:\n%s", c, out)
		}
	}
	if !strings.Contains(out, "NoNewPrivs:\t1") || strings.Contains(out, "REMOUNTED") || strings.HasSuffix(strings.TrimSpace(out), "\n0") {
		t.Errorf("privileges:\n%s", out)
	}
}

func (s *suite) hostFilesHidden(t *testing.T) {
	data := t.TempDir()
	name := "skilld-secret-" + random()
	os.WriteFile(filepath.Join(data, name), []byte("secret data"), 0o644)
	other := s.create(t, sandbox.CreateParams{})
	otherName := "other-task-" + random()
	mustExec(t, other, "echo private > "+otherName, sandbox.Limits{})

	sb := s.create(t, sandbox.CreateParams{})
	paths := append([]string{data, other.HostPath(), sb.HostPath(), filepath.Dir(sb.HostPath())}, s.HostPaths...)
	if home, err := os.UserHomeDir(); err == nil {
		paths = append(paths, home)
	}
	var script strings.Builder
	script.WriteString("cat /etc/shadow >/dev/null 2>&1 && echo READ:/etc/shadow\n")
	for _, p := range paths {
		if p == "" || p == "/" {
			continue
		}
		fmt.Fprintf(&script, "ls -a %q >/dev/null 2>&1 && echo LISTED:%s\n", p, p)
	}
	fmt.Fprintf(&script, "find / -path /proc -prune -o \\( -name %s -o -name %s \\) -print 2>/dev/null | sed 's/^/FOUND:/'\n", name, otherName)
	res := mustExec(t, sb, script.String(), sandbox.Limits{Timeout: 5 * time.Minute})
	for line := range strings.SplitSeq(string(res.Output), "\n") {
		if strings.HasPrefix(line, "READ:") || strings.HasPrefix(line, "LISTED:") || strings.HasPrefix(line, "FOUND:") {
			t.Errorf("a command reached a host file: %s", line)
		}
	}
	if res.Limit != "" {
		t.Errorf("the search was stopped: %s", res.Summary())
	}
}

func (s *suite) writesStayInWorkspace(t *testing.T) {
	sb := s.create(t, sandbox.CreateParams{})
	marker := "skilld-planted-" + random()
	targets := []string{"/" + marker, "/tmp/" + marker, "/usr/" + marker, "/etc/" + marker, "/var/tmp/" + marker, "/dev/shm/" + marker, os.TempDir() + "/" + marker}
	var script strings.Builder
	for _, p := range targets {
		fmt.Fprintf(&script, "touch %q 2>/dev/null; ", p)
	}
	script.WriteString("echo done")
	mustExec(t, sb, script.String(), sandbox.Limits{})
	for _, p := range targets {
		if _, err := os.Lstat(p); err == nil {
			os.Remove(p)
			t.Errorf("a command wrote %s on the host", p)
		}
	}
}

func (s *suite) noNetwork(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
			accepted <- struct{}{}
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	sb := s.create(t, sandbox.CreateParams{})
	script := fmt.Sprintf(`cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' ' | sed 's/^/IFACE:/'
for host in 127.0.0.1 10.0.2.2 1.1.1.1; do
  if command -v bash >/dev/null; then timeout 5 bash -c "echo x > /dev/tcp/$host/%[1]d" 2>/dev/null && echo CONNECTED:bash:$host; fi
  if command -v perl >/dev/null; then timeout 5 perl -MIO::Socket::INET -e 'exit(IO::Socket::INET->new(PeerAddr=>$ARGV[0], PeerPort=>%[1]d, Timeout=>3) ? 0 : 1)' $host && echo CONNECTED:perl:$host; fi
done
echo done`, port)
	res := mustExec(t, sb, script, sandbox.Limits{Timeout: time.Minute})
	for line := range strings.SplitSeq(string(res.Output), "\n") {
		if strings.HasPrefix(line, "CONNECTED:") || strings.HasPrefix(line, "IFACE:") && line != "IFACE:lo" {
			t.Errorf("network reached from a command: %s", line)
		}
	}
	select {
	case <-accepted:
		t.Error("the host's listener on 127.0.0.1 accepted a connection from a command")
	case <-time.After(200 * time.Millisecond):
	}
}

// noProcessOutlives starts processes every way a script can detach and
// checks the host's process table once the command ended, normally and by
// its timeout.
func (s *suite) noProcessOutlives(t *testing.T) {
	sb := s.create(t, sandbox.CreateParams{})
	for _, viaTimeout := range []bool{false, true} {
		secs := 3000 + int(time.Now().UnixNano()%1000)
		detach := fmt.Sprintf(`sleep %[1]d.1 & nohup sleep %[1]d.2 >/dev/null 2>&1 & setsid sleep %[1]d.3 & (sleep %[1]d.4 &) ; sh -c 'sleep %[1]d.5 & exit' ; (setsid sh -c 'sleep %[1]d.6 &' &) ; trap '' HUP TERM; echo detached`, secs)
		lim := sandbox.Limits{}
		if viaTimeout {
			detach += "; sleep 60"
			lim.Timeout = time.Second
		}
		res := mustExec(t, sb, detach, lim)
		if viaTimeout != (res.Limit == sandbox.LimitTimeout) {
			t.Errorf("viaTimeout %v: %s", viaTimeout, res.Summary())
		}
		// Killed processes may take a moment to leave the process table.
		var left []hostProc
		if !eventually(2*time.Second, func() bool {
			left = hostProcesses(fmt.Sprintf("sleep %d.", secs))
			return len(left) == 0
		}) {
			t.Errorf("viaTimeout %v: processes outlived their command: %+v", viaTimeout, left)
			for _, pid := range left {
				syscall.Kill(pid.pid, syscall.SIGKILL)
			}
		}
	}
}

type hostProc struct {
	pid     int
	cmdline string
}

// hostProcesses lists the host's processes whose command line contains s.
func hostProcesses(s string) []hostProc {
	var out []hostProc
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(d + "/cmdline")
		if err != nil {
			continue
		}
		cl := strings.ReplaceAll(string(b), "\x00", " ")
		if strings.Contains(cl, s) && !strings.Contains(cl, "sh -c") {
			if st, err := os.ReadFile(d + "/stat"); err == nil && strings.Contains(string(st), ") Z ") {
				continue // a zombie is not running
			}
			pid, _ := strconv.Atoi(filepath.Base(d))
			out = append(out, hostProc{pid, cl})
		}
	}
	return out
}

func (s *suite) cannotSignal(t *testing.T) {
	victim := exec.Command("sleep", "300")
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	// Waiting for the victim is how its end is seen: a process killed but
	// not yet waited for still answers signal 0.
	exited := make(chan error, 1)
	go func() { exited <- victim.Wait() }()
	defer func() {
		victim.Process.Kill()
		<-exited
	}()
	sb := s.create(t, sandbox.CreateParams{})
	res := mustExec(t, sb, fmt.Sprintf("kill -9 %d 2>/dev/null && echo KILLED:victim; kill -9 %d 2>/dev/null && echo KILLED:server; kill -9 -1 2>/dev/null; echo done", victim.Process.Pid, os.Getpid()), sandbox.Limits{})
	if strings.Contains(string(res.Output), "KILLED:") {
		t.Errorf("a command signalled a host process: %s", res.Output)
	}
	// A kill would have been sent before the command ended; give the
	// victim a moment to die of it.
	select {
	case err := <-exited:
		exited <- err // for the deferred wait
		t.Errorf("the host process is gone: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
}

func (s *suite) forkBomb(t *testing.T) {
	sb := s.create(t, sandbox.CreateParams{})
	lim := sandbox.Limits{Processes: 64, Timeout: 20 * time.Second}
	res := mustExec(t, sb, "bomb() { bomb | bomb & }; bomb; sleep 3; echo survived", lim)
	if strings.HasPrefix(s.Provider.Info().Enforced[sandbox.LimitProcesses], "cgroup") && res.Limit != sandbox.LimitProcesses {
		t.Errorf("a fork bomb ended with %s, want the process limit", res.Summary())
	}
	if res.Limit == sandbox.LimitTimeout {
		t.Errorf("the fork bomb ran into its timeout")
	}
	if res := mustExec(t, sb, "echo after", sandbox.Limits{}); string(res.Output) != "after\n" {
		t.Errorf("after a fork bomb: %+v %q", res, res.Output)
	}
}

func (s *suite) memoryLimit(t *testing.T) {
	sb := s.create(t, sandbox.CreateParams{})
	// awk doubles a string to 512 MiB; the limit is 64 MiB.
	res := mustExec(t, sb, `awk 'BEGIN { s = "x"; while (length(s) < 512 * 1024 * 1024) s = s s; print "ALLOCATED", length(s) }'`, sandbox.Limits{Memory: 64 << 20, Timeout: time.Minute})
	if strings.Contains(string(res.Output), "ALLOCATED") {
		t.Errorf("a command used 512 MiB under a 64 MiB limit: %s", res.Output)
	}
	if strings.HasPrefix(s.Provider.Info().Enforced[sandbox.LimitMemory], "cgroup") && res.Limit != sandbox.LimitMemory {
		t.Errorf("result %s, want the memory limit", res.Summary())
	}
}

func (s *suite) cpuLimit(t *testing.T) {
	sb := s.create(t, sandbox.CreateParams{})
	res := mustExec(t, sb, "while :; do :; done", sandbox.Limits{CPU: time.Second, Timeout: time.Minute})
	if res.Limit != sandbox.LimitCPU {
		t.Errorf("a busy loop ended with %s, want the CPU limit", res.Summary())
	}
}

// placedImmutable: no command changes a placed skill, so the next sandbox
// to place that package (the next task, of any workspace) gets its bytes.
func (s *suite) placedImmutable(t *testing.T) {
	pkg := skillPackage(t, "original")
	dir := sandbox.SkillsDir + "/probe-0badcafe"
	a := s.create(t, sandbox.CreateParams{})
	if err := a.Place(t.Context(), dir, pkg); err != nil {
		t.Fatal(err)
	}
	want := mustExec(t, a, "cd "+dir+" && find . -exec ls -ld --time-style=+%s {} \\; | sort && cat scripts/run.sh data/notes.txt | sha256sum", sandbox.Limits{}).Output
	res := mustExec(t, a, tamperScript(dir), sandbox.Limits{})
	after := mustExec(t, a, "cd "+dir+" && find . -exec ls -ld --time-style=+%s {} \\; | sort && cat scripts/run.sh data/notes.txt | sha256sum", sandbox.Limits{}).Output
	if string(after) != string(want) {
		t.Errorf("the placed skill changed:\nbefore %s\nafter %s\ntampering said %s", want, after, res.Output)
	}
	if b, err := a.ReadFile(t.Context(), dir+"/scripts/run.sh", 1<<20); err != nil || strings.Contains(string(b), "PAYLOAD") {
		t.Errorf("run.sh: %q, %v", b, err)
	}
	b := s.create(t, sandbox.CreateParams{})
	if err := b.Place(t.Context(), dir, pkg); err != nil {
		t.Fatal(err)
	}
	if res := mustExec(t, b, "sh "+dir+"/scripts/run.sh; cat "+dir+"/data/notes.txt", sandbox.Limits{}); string(res.Output) != "original\nnotes original\n" {
		t.Errorf("the next sandbox got %q", res.Output)
	}
}
