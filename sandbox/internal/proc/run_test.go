package proc

import (
	"regexp"
	"testing"
	"time"

	"github.com/skilld/skilld/sandbox"
)

// TestProcessLimits: a command's processes have the CPU-time limit (soft
// at the command's CPU seconds, hard a second later) and no core dumps,
// whether the shell that joins the cgroups sets them or prlimit does.
func TestProcessLimits(t *testing.T) {
	c := Detect()
	defer c.Close()
	var modes []bool // shellLimits
	if c.prlimit != "" {
		modes = append(modes, false)
	}
	if len(c.cg.parent) > 0 {
		if !c.shellLimits {
			t.Errorf("%s cannot set the limits: every command starts prlimit too", c.sh)
		} else {
			modes = append(modes, true)
		}
	}
	if len(modes) == 0 {
		t.Skip("neither cgroups nor prlimit here: no per-process limits to check")
	}
	lim := sandbox.Limits{CPU: 3 * time.Second, Timeout: 30 * time.Second, Output: 1 << 16, Memory: 256 << 20, Processes: 64}
	for _, shell := range modes {
		c.shellLimits = shell
		out, err := c.Run(t.Context(), Spec{Argv: []string{"sh", "-c", "cat /proc/self/limits"}, Limits: lim})
		if err != nil {
			t.Fatal(err)
		}
		if code := exitCode(out.State); code != 0 {
			t.Fatalf("shell %v: exit %d: %s", shell, code, out.Output)
		}
		for _, want := range []string{`Max cpu time +3 +4 +seconds`, `Max core file size +0 +0 +bytes`} {
			if !regexp.MustCompile(want).Match(out.Output) {
				t.Errorf("shell %v: no %q in\n%s", shell, want, out.Output)
			}
		}
	}
}
