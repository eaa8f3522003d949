package volume

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

func support(t *testing.T) Support {
	s := Detect()
	if s.Err != nil {
		if os.Geteuid() == 0 && os.Getenv("CI") == "true" {
			t.Fatalf("a root CI machine cannot make workspace volumes: %v", s.Err)
		}
		t.Skip(s.Err)
	}
	return s
}

// TestCreateWriteReopen: a volume holds at most its size and its inodes,
// is owned by the given ids with nothing else in it, mounts nosuid, and
// comes back with its files after an unmount.
func TestCreateWriteReopen(t *testing.T) {
	s := support(t)
	t.Run("mkfs", func(t *testing.T) { createWriteReopen(t, s) })
	// Copies of an empty file system made once per size; two images from
	// one template are two file systems.
	tpl := s.WithTemplates(t.TempDir())
	t.Run("template", func(t *testing.T) { createWriteReopen(t, tpl) })
	t.Run("template again", func(t *testing.T) { createWriteReopen(t, tpl) })
}

func createWriteReopen(t *testing.T, s Support) {
	dir := t.TempDir()
	image, ws := filepath.Join(dir, "disk.img"), filepath.Join(dir, "workspace")
	os.Mkdir(ws, 0o755)
	const size = 32 << 20
	if err := s.Create(t.Context(), image, ws, Spec{Size: size, UID: 4242, GID: 4243}); err != nil {
		t.Fatal(err)
	}
	defer Unmount(ws)
	if !Mounted(ws) {
		t.Fatal("not mounted")
	}
	var st unix.Stat_t
	// Sparse: the host's disk pays only for what is written.
	if unix.Stat(image, &st); st.Blocks*512 > size/4 {
		t.Errorf("a new image takes %d of its %d bytes on disk", st.Blocks*512, size)
	}
	// No blocks kept for growing it (ext4's resize_inode, compat feature
	// 0x10 at 1024+0x5c): an image is never grown, and they were most of
	// the bytes every new image copies.
	sb := make([]byte, 4)
	if readAt(t, image, sb, 1024+0x5c); sb[0]&0x10 != 0 {
		t.Errorf("the file system keeps room to grow (compat features %#x)", sb)
	}
	unix.Stat(ws, &st)
	entries, _ := os.ReadDir(ws)
	if st.Uid != 4242 || st.Gid != 4243 || len(entries) != 0 {
		t.Errorf("root %d:%d with %v", st.Uid, st.Gid, entries)
	}
	var fs unix.Statfs_t
	unix.Statfs(ws, &fs)
	if fs.Flags&unix.ST_NOSUID == 0 || fs.Flags&unix.ST_NODEV == 0 {
		t.Errorf("mount flags %#x", fs.Flags)
	}
	if fs.Files > uint64(Inodes(size)) {
		t.Errorf("%d inodes, want at most %d", fs.Files, Inodes(size))
	}
	f, _ := os.Create(filepath.Join(ws, "big"))
	_, err := f.Write(make([]byte, 2*size))
	f.Close()
	if !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("writing twice the size: %v", err)
	}
	if info, _ := os.Stat(image); info.Size() != size {
		t.Errorf("image of %d bytes", info.Size())
	}
	os.Remove(filepath.Join(ws, "big"))
	// ext4 may release a removed file's blocks only at its next commit:
	// sync so that the small file below is not refused for want of room.
	if d, err := os.Open(ws); err == nil {
		unix.Syncfs(int(d.Fd()))
		d.Close()
	}
	if err := os.WriteFile(filepath.Join(ws, "kept"), []byte("kept"), 0o644); err != nil {
		t.Fatalf("writing a small file after the full one was removed: %v", err)
	}
	if err := Unmount(ws); err != nil || Mounted(ws) {
		t.Fatalf("Unmount: %v", err)
	}
	if err := s.Open(image, ws); err != nil {
		t.Fatal(err)
	}
	if err := s.Open(image, ws); err != nil {
		t.Fatalf("Open of a mounted volume: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "kept")); string(b) != "kept" {
		t.Errorf("after reopening: %q %v", b, err)
	}
	if err := s.Create(t.Context(), image, filepath.Join(dir, "x"), Spec{Size: size}); err == nil {
		t.Error("Create over an existing image")
	}
}

// TestReopenWhileCopied: a mount namespace made while the volume was
// mounted keeps the file system alive after the host unmounts it;
// reopening then mounts that live file system, not a second, stale one
// over the same image (which loses what the first had not written back).
func TestReopenWhileCopied(t *testing.T) {
	s := support(t)
	dir := t.TempDir()
	image, ws := filepath.Join(dir, "disk.img"), filepath.Join(dir, "workspace")
	os.Mkdir(ws, 0o755)
	if err := s.Create(t.Context(), image, ws, Spec{Size: 32 << 20}); err != nil {
		t.Fatal(err)
	}
	defer Unmount(ws)
	if err := os.WriteFile(filepath.Join(ws, "kept"), []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A process in a mount namespace of its own, as a sandbox starting
	// at that moment would be, holding a copy of every host mount.
	holder := exec.Command("sleep", "60")
	holder.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { holder.Process.Kill(); holder.Wait() }()
	if err := Unmount(ws); err != nil || Mounted(ws) {
		t.Fatalf("Unmount: %v", err)
	}
	if err := s.Open(image, ws); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "kept")); string(b) != "kept" {
		t.Errorf("after reopening: %q %v", b, err)
	}
}

func TestBind(t *testing.T) {
	s := support(t)
	src, hub := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(src, "f"), []byte("x"), 0o644)
	ws, ro := filepath.Join(hub, "a", "ws"), filepath.Join(hub, "a", "ro")
	os.MkdirAll(ws, 0o755)
	os.MkdirAll(ro, 0o755)
	if err := s.Bind(src, ws, false); err != nil {
		t.Fatal(err)
	}
	if err := s.Bind(src, ws, false); err != nil {
		t.Fatalf("Bind again: %v", err)
	}
	if err := s.Bind(src, ro, true); err != nil {
		t.Fatal(err)
	}
	var fs unix.Statfs_t
	unix.Statfs(ws, &fs)
	if !Mounted(ws) || fs.Flags&unix.ST_NOSUID == 0 || fs.Flags&unix.ST_RDONLY != 0 {
		t.Errorf("mounted %v, flags %#x", Mounted(ws), fs.Flags)
	}
	if err := os.WriteFile(filepath.Join(ro, "g"), nil, 0o644); !errors.Is(err, syscall.EROFS) {
		t.Errorf("writing a read-only bind: %v", err)
	}
	if err := UnmountAll(filepath.Join(hub, "a")); err != nil || Mounted(ws) || Mounted(ro) {
		t.Errorf("UnmountAll: %v", err)
	}
	if err := Unmount(ws); err != nil {
		t.Errorf("Unmount of nothing: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(src, "f")); string(b) != "x" {
		t.Errorf("the source after unmounting: %q", b)
	}
}

// TestUnmountKnown: the mounts it is told of go, and one it was not told
// of, deeper down, is found by the walk and goes too, so the folder can be
// removed without deleting through a mount.
func TestUnmountKnown(t *testing.T) {
	s := support(t)
	src, hub := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(src, "f"), []byte("x"), 0o644)
	known, unknown := filepath.Join(hub, "sb", "workspace"), filepath.Join(hub, "sb", "deeper", "other")
	os.MkdirAll(known, 0o755)
	os.MkdirAll(unknown, 0o755)
	for _, d := range []string{known, unknown} {
		if err := s.Bind(src, d, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := UnmountKnown(filepath.Join(hub, "sb"), known); err != nil || Mounted(known) || Mounted(unknown) {
		t.Fatalf("UnmountKnown: %v (known %v, unknown %v)", err, Mounted(known), Mounted(unknown))
	}
	if err := os.RemoveAll(filepath.Join(hub, "sb")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(src, "f")); string(b) != "x" {
		t.Errorf("the source after removing: %q", b)
	}
	if err := UnmountKnown(filepath.Join(hub, "gone"), filepath.Join(hub, "gone", "workspace")); err != nil {
		t.Errorf("a folder that is not there: %v", err)
	}
}

// TestCreateManyAtOnce: as many workspaces as tasks starting together are
// all made, each on a loop device of its own, while as many others are
// removed (their loop devices clearing themselves).
func TestCreateManyAtOnce(t *testing.T) {
	s := support(t)
	dir := t.TempDir()
	const workers, rounds = 64, 8
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			for r := range rounds {
				ws := filepath.Join(dir, fmt.Sprintf("%d-%d", i, r))
				os.Mkdir(ws, 0o755)
				if err := s.Create(t.Context(), ws+".img", ws, Spec{Size: MinSize}); err != nil {
					errs[i] = fmt.Errorf("round %d: %w", r, err)
					return
				}
				if !Mounted(ws) {
					errs[i] = fmt.Errorf("round %d: not mounted", r)
					return
				}
				if err := Unmount(ws); err != nil {
					errs[i] = fmt.Errorf("round %d: %w", r, err)
					return
				}
				os.Remove(ws + ".img")
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("worker %d: %v", i, err)
		}
	}
}

// readAt fills b from path at off.
func readAt(t *testing.T, path string, b []byte, off int64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
}
