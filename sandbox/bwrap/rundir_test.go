package bwrap_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilld/skilld/sandbox/bwrap"
)

// TestRunDirSweep: RunDir removes the folders that runs of this user left
// when they were killed, and nothing else in the temporary directory,
// which every user of the machine can write to: not a link named like one
// (its target untouched), not another user's folder, not a kept one, not
// one of a process still running, not a name it did not make.
func TestRunDirSweep(t *testing.T) {
	tmp := t.TempDir()
	if err := os.Chmod(tmp, 0o1777); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", tmp)
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	dead := gone.Process.Pid
	victim := t.TempDir()
	if err := os.WriteFile(filepath.Join(victim, "precious"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	mkdir := func(name string, files ...string) string {
		dir := filepath.Join(tmp, name)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(dir, f), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	left := mkdir(fmt.Sprintf("skilld-run-%d-1", dead), "workspace.img")
	kept := mkdir(fmt.Sprintf("skilld-run-%d-2", dead), ".kept")
	alive := mkdir(fmt.Sprintf("skilld-run-%d-3", os.Getppid()))
	oldName := mkdir("skilld-run-12345")
	other := mkdir("other-thing")
	link := filepath.Join(tmp, fmt.Sprintf("skilld-run-%d-4", dead))
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	var foreign string
	if os.Geteuid() == 0 {
		foreign = mkdir(fmt.Sprintf("skilld-run-%d-5", dead), "theirs")
		if err := os.Chown(foreign, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}

	dir, err := bwrap.RunDir("skilld-run-", false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(filepath.Base(dir), fmt.Sprintf("skilld-run-%d-", os.Getpid())) || filepath.Dir(dir) != tmp {
		t.Errorf("RunDir made %s, want %s/skilld-run-%d-…", dir, tmp, os.Getpid())
	}
	if info, err := os.Stat(dir); err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("the run's folder: %v, %v; want mode 0700", info, err)
	}
	if _, err := os.Lstat(left); !os.IsNotExist(err) {
		t.Errorf("the folder of a run that is gone is still there (%v)", err)
	}
	for _, keep := range []string{kept, alive, oldName, other, link, foreign, filepath.Join(victim, "precious")} {
		if keep == "" {
			continue
		}
		if _, err := os.Lstat(keep); err != nil {
			t.Errorf("%s went: %v", keep, err)
		}
	}
	if err := bwrap.RemoveRunDir(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Errorf("RemoveRunDir left %s (%v)", dir, err)
	}

	keptDir, err := bwrap.RunDir("skilld-run-", true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(keptDir, ".kept")); err != nil {
		t.Errorf("a kept run's folder has no mark: %v", err)
	}
}
