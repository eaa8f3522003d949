package bwrap_test

import (
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/skilld/skilld/sandbox/bwrap/bwraptest"
	"github.com/skilld/skilld/sandbox/sandboxtest"
)

func TestConformance(t *testing.T) {
	p, cfg := bwraptest.New(t)
	sandboxtest.Run(t, sandboxtest.Options{Provider: p, Isolated: true, HostPaths: []string{cfg.Root, cfg.CacheDir}, UIDPerSandbox: os.Geteuid() == 0, DiskPath: cfg.Root})
}

// TestConformanceAsNonRoot runs the suite again as an unprivileged user,
// where each command's user namespace is the server's own uid's and
// neither cgroups nor mounts are at hand.
func TestConformanceAsNonRoot(t *testing.T) {
	if os.Geteuid() == 0 {
		// The user already has more processes on the host than a command
		// may have: a process limit must count the command's processes
		// only.
		for range 80 {
			busy := exec.Command("sleep", "600")
			busy.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: bwraptest.NonRootUID, Gid: bwraptest.NonRootUID, Groups: []uint32{}}}
			if err := busy.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				busy.Process.Kill()
				busy.Wait()
			})
		}
	}
	bwraptest.RerunAsNonRoot(t, "^(TestConformance|TestAgentEnvReachesOnlyTheCommand|TestInheritedDescriptorsStayOut|TestRootfs|TestEgress|TestExecGrants|TestDependencies|TestRunDirSweep)$")
}
