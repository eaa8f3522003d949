// Package bwraptest gives tests a bubblewrap provider over fresh folders:
// the default provider, so tests of the server and the runtime run skill
// scripts as production does.
package bwraptest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilld/skilld/sandbox/bwrap"
	"github.com/skilld/skilld/sandbox/internal/hostfs"
	"github.com/skilld/skilld/sandbox/internal/mountinfo"
	"github.com/skilld/skilld/sandbox/internal/volume"
)

// New returns a provider whose sandboxes live in <Config.Root>/<id> (the
// workspace at <Config.Root>/<id>/workspace), closed at the end of the
// test. Without bubblewrap it skips, except under CI=true, where it fails:
// scripts/test installs bubblewrap.
func New(t testing.TB) (*bwrap.Provider, bwrap.Config) {
	t.Helper()
	Require(t)
	dir := t.TempDir()
	cfg := bwrap.Config{Root: filepath.Join(dir, "sandboxes"), CacheDir: filepath.Join(dir, "skill-cache")}
	p, err := bwrap.New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Close()
		UnmountAll(t, cfg.Root)
	})
	return p, cfg
}

// Require skips a test that needs bubblewrap when it is not installed,
// except under CI=true, where it fails: scripts/test installs bubblewrap.
func Require(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("bubblewrap is not installed (scripts/test installs it)")
		}
		t.Skip("bubblewrap is not installed; ./scripts/test installs it")
	}
}

// Workspace is the host folder of sandbox id's /workspace.
func Workspace(cfg bwrap.Config, id string) string {
	return filepath.Join(cfg.Root, id, "workspace")
}

// Sandboxes lists the sandbox folders under a provider's Root (a missing
// Root holds none); the provider's own state there (names starting with a
// dot) is not a sandbox.
func Sandboxes(root string) ([]string, error) { return hostfs.List(root) }

// UnmountAll takes away every mount under dir: the sandboxes a test kept
// are mounts of their own as root, and the test's folder cannot go
// while they are there.
func UnmountAll(t testing.TB, dir string) {
	t.Helper()
	if err := volume.UnmountAll(dir); err != nil {
		t.Errorf("unmounting the kept sandboxes: %v", err)
	}
}

// MountsUnder lists the mount points of this process's mount table at or
// under dir.
func MountsUnder(t testing.TB, dir string) []string {
	t.Helper()
	mounts, err := mountinfo.Read()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range mounts {
		if m.Point == dir || strings.HasPrefix(m.Point, dir+"/") {
			out = append(out, m.Point)
		}
	}
	return out
}
