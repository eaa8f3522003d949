package proc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestStaleGroupsKilled: a process left in the command group of a server
// that died is killed at the next start, and the group removed.
func TestStaleGroupsKilled(t *testing.T) {
	probe := Detect()
	defer probe.Close()
	parent, ok := probe.cg.parent[ctlPids]
	if !ok {
		t.Skip("no writable pids cgroup here (not root)")
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(filepath.Dir(parent), "skilld-"+strconv.Itoa(dead.Process.Pid)+"-0badcafe")
	group := filepath.Join(stale, "cmd-left")
	if err := os.MkdirAll(group, 0o755); err != nil {
		t.Fatal(err)
	}
	left := exec.Command("sleep", "300")
	if err := left.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- left.Wait() }()
	if err := os.WriteFile(filepath.Join(group, "cgroup.procs"), []byte(strconv.Itoa(left.Process.Pid)), 0); err != nil {
		left.Process.Kill()
		t.Fatal(err)
	}
	Detect().Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		left.Process.Kill()
		t.Fatal("the process left in a dead server's group is alive")
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the dead server's group is still there: %v", err)
	}
}
