package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skilld/skilld/internal/testbin"
	"github.com/skilld/skilld/sandbox/bwrap/bwraptest"
)

// slowScript answers once with a line of text and a command that takes a
// while, then ends the task.
const slowScript = `[
  {"text": "first line", "tool_calls": [{"name": "shell", "arguments": {"command": "sleep 2"}}]},
  {"text": "after the sleep"}
]`

// TestRunLeavesNothing: `skilld run` leaves no folder or mount of its
// sandbox behind, however it ends. Its output's reader going away (stdout
// a pipe closed after the first line, as `skilld run … | head -1` does)
// stops the task and removes the sandbox; a run killed outright leaves
// them, and the next `skilld run` of the same user removes them, but not
// a sandbox kept with --keep-sandbox.
func TestRunLeavesNothing(t *testing.T) {
	bwraptest.Require(t)
	bin := testbin.Skilld(t)
	script := filepath.Join(t.TempDir(), "slow.json")
	if err := os.WriteFile(script, []byte(slowScript), 0o644); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	// Each part has a temporary folder of its own for its runs.
	tempDir := func(t *testing.T) string {
		tmp := t.TempDir()
		t.Cleanup(func() { bwraptest.UnmountAll(t, tmp) })
		return tmp
	}
	command := func(tmp string, extra ...string) *exec.Cmd {
		args := append([]string{"run", "--skills", examples, "--model", "scripted:" + script, "--context-window", "128000", "--cache-dir", cache}, extra...)
		cmd := exec.Command(bin, append(args, "count the rows")...)
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
		return cmd
	}
	// start runs cmd with stdout to a pipe and returns the pipe's reader
	// once the run has printed its first line of text: its sandbox exists
	// and its command is sleeping.
	start := func(cmd *exec.Cmd, stderr *bytes.Buffer) *os.File {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout, cmd.Stderr = w, stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		w.Close()
		lines := bufio.NewScanner(r)
		for lines.Scan() {
			if strings.Contains(lines.Text(), "first line") {
				return r
			}
		}
		cmd.Wait()
		t.Fatalf("the run ended before its first line: %v\n%s", lines.Err(), stderr)
		return nil
	}

	t.Run("reader gone", func(t *testing.T) {
		tmp := tempDir(t)
		var stderr bytes.Buffer
		cmd := command(tmp)
		r := start(cmd, &stderr)
		r.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(time.Minute):
			cmd.Process.Kill()
			t.Fatalf("the run went on for a minute after its reader went away\n%s", &stderr)
		}
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			t.Errorf("the run was killed by %v, without removing its sandbox\n%s", ws.Signal(), &stderr)
		}
		noLeftovers(t, tmp)
	})

	t.Run("killed", func(t *testing.T) {
		tmp := tempDir(t)
		var stderr, keptErr bytes.Buffer
		kept := command(tmp, "--keep-sandbox")
		start(kept, &keptErr).Close()
		kept.Process.Kill()
		kept.Wait()
		cmd := command(tmp)
		start(cmd, &stderr).Close()
		cmd.Process.Kill()
		cmd.Wait()
		if left := runFolders(t, tmp); len(left) != 2 {
			t.Fatalf("after two runs killed, the temporary folder holds %v, want their two folders", left)
		}
		next := exec.Command(bin, "run", "--skills", examples, "--model", "scripted:../../examples/scripts/csv-demo.json",
			"--context-window", "128000", "--cache-dir", cache, "How many rows has orders.csv?")
		next.Env = append(os.Environ(), "TMPDIR="+tmp)
		if out, err := next.CombinedOutput(); err != nil {
			t.Fatalf("the next run: %v\n%s", err, out)
		}
		left := runFolders(t, tmp)
		if len(left) != 1 {
			t.Fatalf("after the next run, the temporary folder holds %v, want the kept sandbox's folder alone", left)
		}
		ws := filepath.Join(left[0], "run", "workspace")
		if _, err := os.Stat(ws); err != nil {
			t.Errorf("the kept sandbox's workspace went: %v", err)
		}
		for _, m := range bwraptest.MountsUnder(t, tmp) {
			if !strings.HasPrefix(m, left[0]+"/") {
				t.Errorf("a mount of a killed run is left: %s", m)
			}
		}
	})
}

// runFolders are the folders `skilld run` made in tmp.
func runFolders(t *testing.T, tmp string) []string {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(tmp, "skilld-run-*"))
	if err != nil {
		t.Fatal(err)
	}
	return matches
}

// noLeftovers fails t when a run left a folder or a mount in tmp.
func noLeftovers(t *testing.T, tmp string) {
	t.Helper()
	if left := runFolders(t, tmp); len(left) > 0 {
		t.Errorf("the run left %v", left)
	}
	if m := bwraptest.MountsUnder(t, tmp); len(m) > 0 {
		t.Errorf("the run left mounts: %v", m)
	}
}
