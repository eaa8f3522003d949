package bwrap_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skilld/skilld/sandbox"
	"github.com/skilld/skilld/sandbox/bwrap"
	"github.com/skilld/skilld/sandbox/bwrap/bwraptest"
)

// TestReopenInterruptedCreate: a server killed while it made a sandbox's
// workspace image leaves the sandbox's folder, an empty workspace folder
// and a half-made image; the task, resumed, reopens the sandbox and gets a
// working workspace with its disk limit, not an error and not an
// unlimited folder.
func TestReopenInterruptedCreate(t *testing.T) {
	bwraptest.Require(t)
	if os.Getuid() != 0 {
		t.Skip("workspace images need root")
	}
	dir := t.TempDir()
	root := filepath.Join(dir, "sb")
	p, err := bwrap.New(t.Context(), bwrap.Config{Root: root, CacheDir: filepath.Join(dir, "cache")})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	defer bwraptest.UnmountAll(t, dir)
	const quota = 32 << 20
	// What a kill -9 between making the image and mounting it leaves.
	sbDir := filepath.Join(root, "t-interrupted")
	if err := os.MkdirAll(filepath.Join(sbDir, "workspace"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sbDir, "workspace.img.new"), make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	sb, err := p.Create(t.Context(), sandbox.CreateParams{ID: "t-interrupted", Reopen: true, Disk: quota})
	if err != nil {
		t.Fatalf("reopening a sandbox whose creation was interrupted: %v", err)
	}
	defer sb.Destroy(t.Context())
	res, err := sb.Exec(t.Context(), sandbox.ExecParams{Command: "echo kept > f && cat f && head -c 100M /dev/zero > big; echo rc=$?",
		Limits: sandbox.Limits{Timeout: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	if out := string(res.Output); !strings.HasPrefix(out, "kept\n") || !strings.Contains(out, "No space left on device") {
		t.Errorf("the reopened workspace: %q (want a working folder with its %d MiB limit)", out, quota>>20)
	}
	if _, err := os.Stat(filepath.Join(sbDir, "workspace.img.new")); !os.IsNotExist(err) {
		t.Errorf("the half-made image is still there: %v", err)
	}
}
