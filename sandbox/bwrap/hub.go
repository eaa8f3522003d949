package bwrap

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/skilld/skilld/sandbox/internal/volume"
)

// hub is where a root server's sandboxes are within reach of their own
// uids. bubblewrap runs as the task's uid and resolves each folder it binds
// by its path, so those folders cannot sit below the work directory, whose
// parents (the data directory, say) only root may enter; nor may the skill
// cache be opened to every uid. The hub is a folder of its own under
// /run/skilld, mode 0711 (anyone may pass, nobody may list), holding for
// each sandbox a folder of the sandbox's uid (0700) with what bubblewrap
// binds: the workspace (its volume, or a nosuid bind of its folder) and
// each placed skill (a read-only bind of its cached copy). It is a tmpfs of
// its own and goes with the provider; the mounts of a provider that died
// are swept by the next one.
type hub struct{ dir string }

// hubBase is where hubs live: /run/skilld, or below the temporary folder
// on a machine without /run.
func hubBase() string {
	if info, err := os.Stat("/run"); err == nil && info.IsDir() {
		return "/run/skilld"
	}
	return filepath.Join(os.TempDir(), "skilld-hubs")
}

// openHub makes this provider's hub, after sweeping those of processes
// that are gone.
func openHub() (*hub, error) {
	base := hubBase()
	if err := os.MkdirAll(base, 0o711); err != nil {
		return nil, fmt.Errorf("bwrap: %w", err)
	}
	if err := os.Chmod(base, 0o711); err != nil {
		return nil, fmt.Errorf("bwrap: %w", err)
	}
	sweepOwned(base, "", removeTree)
	dir, err := mkdirOwned(base, "", 0o711)
	if err != nil {
		return nil, fmt.Errorf("bwrap: %w", err)
	}
	// /run is not memory everywhere (a VM whose / is one ext4 disk); the
	// hub's folders are made and removed for every task and skill, and
	// on a disk that is most of a placement's cost.
	if err := volume.Memory(dir); err != nil {
		os.Remove(dir)
		return nil, fmt.Errorf("bwrap: %w", err)
	}
	return &hub{dir: dir}, nil
}

// mkdirOwned makes a folder in base named for this process,
// <prefix><pid>-<random>, so that one left by a process that is gone can be
// told apart (sweepOwned), and gives it mode.
func mkdirOwned(base, prefix string, mode os.FileMode) (string, error) {
	var b [6]byte
	rand.Read(b[:])
	dir := filepath.Join(base, fmt.Sprintf("%s%d-%s", prefix, os.Getpid(), hex.EncodeToString(b[:])))
	if err := os.Mkdir(dir, mode); err != nil {
		return "", err
	}
	// Whatever the umask took.
	if err := os.Chmod(dir, mode); err != nil {
		os.Remove(dir)
		return "", err
	}
	return dir, nil
}

// sweepOwned removes, with remove, the folders mkdirOwned made in base for
// processes that are gone.
func sweepOwned(base, prefix string, remove func(string) error) {
	entries, _ := os.ReadDir(base)
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok {
			continue
		}
		pid, _, named := strings.Cut(rest, "-")
		n, err := strconv.Atoi(pid)
		if !named || err != nil || n == os.Getpid() {
			continue
		}
		if err := syscall.Kill(n, 0); err == nil || err == syscall.EPERM {
			continue // that process is alive
		}
		remove(filepath.Join(base, e.Name()))
	}
}

// removeTree detaches every mount under dir, then removes it; it removes
// nothing while a mount is left (removing through a mount would delete a
// workspace's files).
func removeTree(dir string) error {
	if err := volume.UnmountAll(dir); err != nil {
		return err
	}
	return os.RemoveAll(dir)
}

// sandbox is the hub folder of sandbox id.
func (h *hub) sandbox(id string) string { return filepath.Join(h.dir, id) }

func (h *hub) close() error { return removeTree(h.dir) }
