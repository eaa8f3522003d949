package bwraptest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// NonRootUID is the unprivileged user (nobody) tests run again as, so that
// the sandbox's proofs hold for a server that is not root too.
const NonRootUID = 65534

// asNonRootEnv is set in a test binary run again as NonRootUID.
const asNonRootEnv = "SKILLD_TEST_AS_NONROOT"

// RerunAsNonRoot runs the tests matching pattern again in a copy of this
// test binary started as NonRootUID (with a home and temporary folder of
// its own), and fails t when they fail. It skips when this process is not
// root (the tests ran as a non-root user already) or is that copy.
func RerunAsNonRoot(t *testing.T, pattern string) {
	t.Helper()
	if os.Getenv(asNonRootEnv) != "" {
		t.Skip("already running as the unprivileged user")
	}
	if os.Geteuid() != 0 {
		t.Skip("running as a non-root user already: the tests themselves are that run")
	}
	Require(t)
	home, err := os.MkdirTemp("", "skilld-nonroot-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	bin := filepath.Join(home, "test.bin")
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
		if err := os.Chown(p, NonRootUID, NonRootUID); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(home, 0o755)
	args := []string{"-test.run", pattern, "-test.timeout", "10m"}
	if testing.Verbose() {
		args = append(args, "-test.v")
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = tmp
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + tmp, "TMPDIR=" + tmp, "CI=" + os.Getenv("CI"), asNonRootEnv + "=" + strconv.Itoa(NonRootUID)}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: NonRootUID, Gid: NonRootUID, Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the tests as uid %d failed: %v\n%s", NonRootUID, err, out)
	}
	t.Logf("the tests as uid %d:\n%s", NonRootUID, out)
}
