package bwrap

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/skilld/skilld/sandbox"
	"github.com/skilld/skilld/sandbox/sandboxtest"
)

func newProvider(t testing.TB) *Provider {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("bubblewrap is not installed")
		}
		t.Skip("bubblewrap is not installed")
	}
	dir := t.TempDir()
	p, err := New(t.Context(), Config{Root: filepath.Join(dir, "sandboxes"), CacheDir: filepath.Join(dir, "cache")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// TestAgentEnvReachesOnlyTheCommand: even a loader variable that CheckEnv
// refuses, had it reached a sandbox's environment, would take effect in
// the command only: no helper that sets the sandbox up (bwrap, prlimit,
// env) runs with it, and where it runs, nothing is privileged. (Before
// commands started unprivileged, an agent's LD_PRELOAD ran inside setpriv
// as root, with CAP_SETUID.)
func TestAgentEnvReachesOnlyTheCommand(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("gcc is not installed")
		}
		t.Skip("gcc is not installed")
	}
	p := newProvider(t)
	s, err := p.Create(t.Context(), sandbox.CreateParams{ID: "preload"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Destroy(t.Context())
	if err := s.WriteFile(t.Context(), "p.c", []byte(sandboxtest.ProbeLibrarySource())); err != nil {
		t.Fatal(err)
	}
	if res, err := s.Exec(t.Context(), sandbox.ExecParams{Command: "gcc -shared -fPIC -o p.so p.c"}); err != nil || res.ExitCode != 0 {
		t.Fatalf("gcc: %v %s", err, res.Output)
	}
	inner := s.(*sb)
	inner.env = append(inner.env, "LD_PRELOAD=/workspace/p.so")
	if res, err := s.Exec(t.Context(), sandbox.ExecParams{Command: "/bin/true; echo ran"}); err != nil || !strings.Contains(string(res.Output), "ran") {
		t.Fatalf("%v %s", err, res.Output)
	}
	log, err := s.ReadFile(t.Context(), "preload.log", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	for _, head := range sandboxtest.CheckPreloadLog(t, string(log)) {
		for _, helper := range []string{"bwrap", "prlimit", "/env", "setpriv"} {
			if strings.Contains(head, helper) {
				t.Errorf("the agent's environment reached a helper: %s", head)
			}
		}
	}
}

// TestInheritedDescriptorsStayOut: a descriptor the server inherited open
// (from a shell or a supervisor that did not mark it close-on-exec) does
// not reach a command.
func TestInheritedDescriptorsStayOut(t *testing.T) {
	var fds [2]int
	if err := unix.Pipe(fds[:]); err != nil { // no O_CLOEXEC: as inherited
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	p := newProvider(t)
	s, err := p.Create(t.Context(), sandbox.CreateParams{ID: "fds"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Destroy(t.Context())
	res, err := s.Exec(t.Context(), sandbox.ExecParams{Command: "exec ls /proc/self/fd"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(string(res.Output)); len(got) != 4 {
		t.Errorf("a command's descriptors: %q (the inherited pipe is %d and %d)", got, fds[0], fds[1])
	}
}
