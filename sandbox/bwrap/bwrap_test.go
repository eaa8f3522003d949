package bwrap_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/skilld/skilld/sandbox/bwrap"
	"github.com/skilld/skilld/sandbox/bwrap/bwraptest"
	"github.com/skilld/skilld/sandbox/sandboxtest"
)

func TestConformance(t *testing.T) {
	p, cfg := bwraptest.New(t)
	sandboxtest.Run(t, sandboxtest.Options{Provider: p, Isolated: true, HostPaths: []string{cfg.Root, cfg.CacheDir}})
}

// TestConformanceAsNonRoot runs the suite again in a copy of this test
// binary started as an unprivileged user, where bubblewrap makes its own
// user namespace instead of dropping root with setpriv.
func TestConformanceAsNonRoot(t *testing.T) {
	if os.Getenv(asUserEnv) != "" {
		t.Skip("already running as the unprivileged user")
	}
	if os.Geteuid() != 0 {
		t.Skip("running as a non-root user already: TestConformance is that run")
	}
	bwraptest.New(t) // skips or fails as TestConformance does
	home, err := os.MkdirTemp("", "skilld-nonroot-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	const uid, gid = bwrap.DefaultUID, bwrap.DefaultGID
	bin := filepath.Join(home, "bwrap.test")
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(home, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{home, tmp} {
		if err := os.Chown(p, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(home, 0o755)
	// The user already has more processes on the host than a command may
	// have: a process limit must count the command's processes only.
	for range 80 {
		busy := exec.Command("sleep", "600")
		busy.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid, Groups: []uint32{}}}
		if err := busy.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			busy.Process.Kill()
			busy.Wait()
		})
	}
	args := []string{"-test.run", "^TestConformance$", "-test.timeout", "10m"}
	if testing.Verbose() {
		args = append(args, "-test.v")
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = tmp
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + tmp, "TMPDIR=" + tmp, "CI=" + os.Getenv("CI"), asUserEnv + "=" + strconv.Itoa(uid)}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid, Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the suite as uid %d failed: %v\n%s", uid, err, out)
	}
	t.Logf("the suite as uid %d:\n%s", uid, out)
}

const asUserEnv = "SKILLD_BWRAP_TEST_AS_UID"
