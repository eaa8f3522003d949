package bwrap

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// keptMark is the file RunDir leaves in a folder whose sandbox is to be
// kept: no later sweep removes it.
const keptMark = ".kept"

// RunDir makes a private folder (0700) in the temporary directory for the
// sandboxes of a provider only this process uses (skilld run),
// <prefix><pid>-<random>. A process killed before it could remove its
// folder leaves it, with its sandbox's workspace still mounted (a loop
// device and a mount every later bubblewrap reads); so first it removes
// the folders of prefix that this user's processes that are gone left,
// unmounting what they hold, except those made with kept (a sandbox the
// user asked to keep).
func RunDir(prefix string, kept bool) (string, error) {
	base := os.TempDir()
	sweepOwned(base, prefix, func(dir string) error {
		if !leftBehind(dir) {
			return nil
		}
		return removeTree(dir)
	})
	dir, err := os.MkdirTemp(base, prefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return "", fmt.Errorf("making the run's folder: %w", err)
	}
	if kept {
		if err := os.WriteFile(filepath.Join(dir, keptMark), nil, 0o600); err != nil {
			os.Remove(dir)
			return "", fmt.Errorf("making the run's folder: %w", err)
		}
	}
	return dir, nil
}

// RemoveRunDir removes a folder RunDir made, after unmounting whatever is
// left mounted in it; it removes nothing while a mount is left.
func RemoveRunDir(dir string) error { return removeTree(dir) }

// leftBehind says dir is a folder RunDir made for this user and a sandbox
// not to be kept: a real folder (not a link: the temporary directory is
// everyone's), owned by this process's user, without the kept mark.
func leftBehind(dir string) bool {
	info, err := os.Lstat(dir)
	if err != nil || !info.IsDir() {
		return false
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) != os.Geteuid() {
		return false
	}
	_, err = os.Lstat(filepath.Join(dir, keptMark))
	return os.IsNotExist(err)
}
