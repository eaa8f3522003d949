// Package volume makes a sandbox's workspace a mount of its own on the
// host, mounted nosuid and nodev, so that nothing a task leaves there works
// with privilege (a set-uid file, a device), and, given a size, an ext4
// file system in a sparse image file beside the workspace, so that a task
// that writes without end gets ENOSPC at its limit instead of filling the
// server's disk. The image is a file on the host, so the workspace
// survives a restart of the server: Open mounts it again.
//
// It needs what only root has: mount(2) (CAP_SYS_ADMIN), loop devices
// (/dev/loop-control) and mkfs.ext4 (e2fsprogs). Detect says whether this
// machine has them.
package volume

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skilld/skilld/sandbox/internal/mountinfo"
)

// BytesPerInode is the ext4 default ratio: a workspace of N bytes holds at
// most N/BytesPerInode files and folders.
const BytesPerInode = 16 << 10

// MinSize is the smallest image: ext4 needs room for its own tables.
const MinSize = 8 << 20

// Inodes is how many files and folders a workspace of size bytes holds.
func Inodes(size int64) int64 { return max(size/BytesPerInode, 256) }

// Support is what this machine offers.
type Support struct {
	mkfs string
	// Err says why workspaces of bounded size cannot be made here; nil
	// when they can.
	Err error
	// BindErr says why workspaces cannot even be mounted nosuid here (not
	// root); nil when they can.
	BindErr error
	// tmpl, when set, holds the empty file systems new images copy.
	tmpl *templates
	// attaching is held while a loop device is found and bound: every
	// caller asking for a free one at once is told the same one, and all
	// but one must ask again, so hundreds of tasks starting together ran
	// out of attempts.
	attaching *sync.Mutex
}

// Detect looks for root, loop devices and mkfs.ext4.
func Detect() Support {
	s := Support{attaching: &sync.Mutex{}}
	if os.Geteuid() != 0 {
		s.BindErr = errors.New("mounting needs root")
		s.Err = errors.New("a size-limited workspace is a loop-mounted file system, which needs a server running as root")
		return s
	}
	mkfs, err := exec.LookPath("mkfs.ext4")
	if err != nil {
		s.Err = errors.New("mkfs.ext4 is not installed (Debian/Ubuntu: apt-get install e2fsprogs)")
		return s
	}
	s.mkfs = mkfs
	if _, err := os.Stat("/dev/loop-control"); err != nil {
		s.Err = errors.New("there are no loop devices (/dev/loop-control; modprobe loop)")
	}
	return s
}

// Spec is one workspace's file system.
type Spec struct {
	// Size is the image's size in bytes: the most the host's disk can
	// lose to the workspace.
	Size int64
	// UID and GID own the file system's root.
	UID, GID int
}

// Create makes image (which must not exist) as an ext4 file system of
// s.Size bytes and mounts it on workspace, an empty folder. The image is
// made under TempName(image) and renamed into place once whole, so a
// process killed meanwhile never leaves a half-made file system where a
// reopened sandbox would mount it. On failure nothing is left mounted and
// neither file is left.
func (sup Support) Create(ctx context.Context, image, workspace string, s Spec) error {
	if sup.Err != nil {
		return sup.Err
	}
	if _, err := os.Lstat(image); err == nil {
		return fmt.Errorf("creating the workspace image: %s exists", image)
	}
	tmp := TempName(image)
	os.Remove(tmp) // what a process killed while making it left
	size, inodes := max(s.Size, MinSize), Inodes(s.Size)
	var err error
	if sup.tmpl != nil {
		var tpl string
		if tpl, err = sup.tmpl.template(ctx, sup.mkfs, size, inodes); err == nil {
			err = copySparse(tpl, tmp)
		}
	} else {
		err = format(ctx, sup.mkfs, tmp, size, inodes, s.UID, s.GID)
	}
	if err == nil {
		err = os.Rename(tmp, image)
	}
	if err == nil {
		err = sup.mount(image, workspace, true)
	}
	if err == nil {
		// mkfs makes lost+found, owned by root: the task's folder holds
		// only what it makes. A template's root is root's.
		err = os.Remove(filepath.Join(workspace, "lost+found"))
		if errors.Is(err, os.ErrNotExist) {
			err = nil
		}
		if err == nil && sup.tmpl != nil {
			err = os.Lchown(workspace, s.UID, s.GID)
		}
		if err != nil {
			Unmount(workspace)
		}
	}
	if err != nil {
		os.Remove(tmp)
		os.Remove(image)
		return fmt.Errorf("making a workspace of %d MiB: %w", s.Size>>20, err)
	}
	return nil
}

// TempName is where Create makes image before it is whole.
func TempName(image string) string { return image + ".new" }

// Open mounts image on workspace unless it is mounted there already (a
// server restarted while the machine kept its mounts).
func (sup Support) Open(image, workspace string) error {
	if sup.Err != nil {
		return sup.Err
	}
	if Mounted(workspace) {
		return nil
	}
	if err := sup.mount(image, workspace, false); err != nil {
		return fmt.Errorf("mounting the workspace image again: %w", err)
	}
	return nil
}

// Bind mounts src on dst, an existing folder, nosuid and nodev (and
// read-only with readOnly). Mounted already, dst is left as it is.
func (sup Support) Bind(src, dst string, readOnly bool) error {
	if sup.BindErr != nil {
		return sup.BindErr
	}
	if Mounted(dst) {
		return nil
	}
	if err := unix.Mount(src, dst, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("mounting %s: %w", dst, err)
	}
	// A bind mount takes its flags from a remount.
	flags := uintptr(unix.MS_REMOUNT | unix.MS_BIND | unix.MS_NOSUID | unix.MS_NODEV)
	if readOnly {
		flags |= unix.MS_RDONLY
	}
	if err := unix.Mount("", dst, "", flags, ""); err != nil {
		Unmount(dst)
		return fmt.Errorf("mounting %s nosuid: %w", dst, err)
	}
	return nil
}

// Memory mounts a small tmpfs (nosuid, nodev, noexec) of mode 0711 on
// dir, an existing folder: a place for mount points that costs no disk
// writes, whatever file system dir is on.
func Memory(dir string) error {
	if err := unix.Mount("skilld", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0711,size=4m"); err != nil {
		return fmt.Errorf("mounting memory on %s: %w", dir, err)
	}
	return nil
}

// UnmountAll detaches every mount at or under dir, the deepest first; it
// fails when any is left.
func UnmountAll(dir string) error {
	points, err := mountsUnder(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range points {
		if err := unix.Unmount(p, unix.MNT_DETACH|unix.UMOUNT_NOFOLLOW); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			errs = append(errs, fmt.Errorf("unmounting %s: %w", p, err))
		}
	}
	if left, err := mountsUnder(dir); err == nil && len(left) > 0 {
		errs = append(errs, fmt.Errorf("still mounted: %s", strings.Join(left, ", ")))
	}
	return errors.Join(errs...)
}

// UnmountKnown detaches the mounts at points, under dir, and then any
// other mount under dir as UnmountAll does; it fails when any is left.
// Only when a walk of dir finds a mount it was not told of does it read
// the mount table, which holds a workspace per running task: reading it
// for every removal made removals cost in proportion to the tasks
// running.
func UnmountKnown(dir string, points ...string) error {
	for _, p := range points {
		if err := unix.Unmount(p, unix.MNT_DETACH|unix.UMOUNT_NOFOLLOW); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("unmounting %s: %w", p, err)
		}
	}
	if mountUnder(dir) {
		return UnmountAll(dir)
	}
	return nil
}

// mountUnder reports whether dir or a folder under it is the root of a
// mount, following no link; an unreadable folder counts as one (the
// caller then reads the mount table).
func mountUnder(dir string) bool {
	if Mounted(dir) {
		return true
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	for _, e := range entries {
		if e.IsDir() && mountUnder(filepath.Join(dir, e.Name())) {
			return true
		}
	}
	return false
}

// mountsUnder lists the mount points at or under dir, the deepest first.
func mountsUnder(dir string) ([]string, error) {
	table, err := mountinfo.Read()
	if err != nil {
		return nil, err
	}
	dir = filepath.Clean(dir)
	var out []string
	for _, m := range table {
		if m.Point == dir || strings.HasPrefix(m.Point, dir+"/") {
			out = append(out, m.Point)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out, nil
}

// Mounted reports whether path is the root of a mount.
func Mounted(path string) bool {
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_BASIC_STATS, &st); err != nil {
		return false
	}
	return st.Attributes_mask&unix.STATX_ATTR_MOUNT_ROOT != 0 && st.Attributes&unix.STATX_ATTR_MOUNT_ROOT != 0
}

// Unmount takes the mount at path away; a mount still busy (a process of
// a killed command not yet gone) is detached and goes when it is free.
// Not mounted is not an error.
func Unmount(path string) error {
	for range 50 {
		err := unix.Unmount(path, unix.UMOUNT_NOFOLLOW)
		switch {
		case err == nil:
			if !Mounted(path) {
				return nil
			}
		case errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOENT):
			return nil
		case errors.Is(err, unix.EBUSY):
			time.Sleep(10 * time.Millisecond)
		default:
			return fmt.Errorf("unmounting %s: %w", path, err)
		}
	}
	if err := unix.Unmount(path, unix.MNT_DETACH|unix.UMOUNT_NOFOLLOW); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("detaching %s: %w", path, err)
	}
	return nil
}

// mount attaches image to a free loop device and mounts it on dir. The
// device is set to clear itself, so it is freed when the mount goes.
//
// An unmounted image may still be live: a mount namespace made while it
// was mounted (any sandbox starting then) holds a copy of the mount, and
// with it the file system, until that namespace lets go. A second ext4
// over the same image would read it as it was on disk, without what the
// live one has not written back, and the two would then overwrite each
// other. So the loop device still bound to the image is mounted again:
// the kernel hands back the live file system.
//
// A fresh image (made just now, O_EXCL) has no device to look for: a
// bound device holds its file open, so no new file can have its inode.
// Looking reads every loop device: with a mounted workspace per running
// task, each start would cost in proportion to the tasks running.
func (sup Support) mount(image, dir string, fresh bool) error {
	var dev *os.File
	var err error
	if !fresh {
		dev, err = bound(image)
	}
	if err == nil && dev == nil {
		sup.attaching.Lock()
		dev, err = attach(image)
		sup.attaching.Unlock()
	}
	if err != nil {
		return err
	}
	defer dev.Close()
	if err := unix.Mount(dev.Name(), dir, "ext4", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOATIME, "noinit_itable"); err != nil {
		return fmt.Errorf("mounting %s: %w", dev.Name(), err)
	}
	return nil
}

// bound returns, open, the loop device image is bound to, or nil when
// there is none. Holding the device open keeps it from clearing itself
// before it is mounted.
func bound(image string) (*os.File, error) {
	var st unix.Stat_t
	if err := unix.Stat(image, &st); err != nil {
		return nil, fmt.Errorf("reading %s: %w", image, err)
	}
	names, err := filepath.Glob("/sys/block/loop*")
	if err != nil {
		return nil, err
	}
	for _, sys := range names {
		// Only a bound device has a loop/backing_file.
		if _, err := os.Stat(filepath.Join(sys, "loop", "backing_file")); err != nil {
			continue
		}
		dev, err := os.OpenFile("/dev/"+filepath.Base(sys), os.O_RDWR, 0)
		if err != nil {
			continue
		}
		info, err := unix.IoctlLoopGetStatus64(int(dev.Fd()))
		if err == nil && info.Inode == st.Ino &&
			unix.Major(info.Device) == unix.Major(st.Dev) && unix.Minor(info.Device) == unix.Minor(st.Dev) {
			return dev, nil
		}
		dev.Close()
	}
	return nil, nil
}

// attach binds image to a free loop device and returns the device, open.
func attach(image string) (*os.File, error) {
	ctl, err := os.OpenFile("/dev/loop-control", os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer ctl.Close()
	img, err := os.OpenFile(image, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer img.Close()
	// Another process may take the free device first, and a device still
	// clearing itself after its unmount is named free but refuses: ask
	// again, a little later each time, for up to about five seconds.
	for attempt := range 200 {
		if attempt > 0 {
			time.Sleep(min(time.Duration(attempt)*time.Millisecond/4, 50*time.Millisecond))
		}
		n, err := unix.IoctlRetInt(int(ctl.Fd()), unix.LOOP_CTL_GET_FREE)
		if err != nil {
			return nil, fmt.Errorf("finding a free loop device: %w", err)
		}
		name := "/dev/loop" + strconv.Itoa(n)
		dev, err := os.OpenFile(name, os.O_RDWR, 0)
		if errors.Is(err, os.ErrNotExist) {
			// No devtmpfs (some containers): make the node.
			if merr := unix.Mknod(name, unix.S_IFBLK|0o660, int(unix.Mkdev(7, uint32(n)))); merr == nil || errors.Is(merr, os.ErrExist) {
				dev, err = os.OpenFile(name, os.O_RDWR, 0)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("opening %s: %w", name, err)
		}
		cfg := unix.LoopConfig{Fd: uint32(img.Fd()), Info: unix.LoopInfo64{Flags: unix.LO_FLAGS_AUTOCLEAR}}
		copy(cfg.Info.File_name[:], image)
		err = unix.IoctlLoopConfigure(int(dev.Fd()), &cfg)
		if err == nil {
			return dev, nil
		}
		dev.Close()
		if !errors.Is(err, unix.EBUSY) {
			return nil, fmt.Errorf("attaching %s to %s: %w", image, name, err)
		}
	}
	return nil, errors.New("no loop device stayed free")
}
