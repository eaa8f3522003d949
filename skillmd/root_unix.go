//go:build unix

package skillmd

import (
	"errors"
	"io/fs"

	"golang.org/x/sys/unix"
)

// osRoot reads skill files under a directory of the operating system.
// It goes to the system directly, relative to the directory's descriptor:
// os.Open resolves the whole path every time and asks the poller to take
// every file it opens (one more system call, which regular files refuse).
type osRoot struct{ fd int }

func openRoot(root string) (osRoot, error) {
	fd, err := retry(func() (int, error) { return unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0) })
	if err != nil {
		return osRoot{}, &fs.PathError{Op: "open", Path: root, Err: err}
	}
	return osRoot{fd: fd}, nil
}

func (r osRoot) close() { unix.Close(r.fd) }

// read reads the file at rel when it is a regular file and not a link:
// regular reports that it is one. The open refuses a link (O_NOFOLLOW);
// O_NONBLOCK keeps a FIFO from blocking it, and a FIFO is not a regular
// file, so it is never read. One read takes the size the stat gave.
func (r osRoot) read(rel string) (data []byte, regular bool, err error) {
	fd, err := retry(func() (int, error) {
		return unix.Openat(r.fd, rel, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		// Missing, a link (ELOOP), or under a non-directory: not a skill
		// file. Any other failure (EACCES) is one that cannot be read, if
		// the file is a regular one.
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			return nil, false, nil
		}
		var st unix.Stat_t
		regular := unix.Fstatat(r.fd, rel, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG
		return nil, regular, &fs.PathError{Op: "open", Path: rel, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, true, &fs.PathError{Op: "stat", Path: rel, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, false, nil
	}
	data = make([]byte, st.Size)
	n := 0
	for n < len(data) {
		m, err := retry(func() (int, error) { return unix.Read(fd, data[n:]) })
		if err != nil {
			return nil, true, &fs.PathError{Op: "read", Path: rel, Err: err}
		}
		if m == 0 {
			return data[:n], true, nil // shrank since the stat
		}
		n += m
	}
	if len(data) > 0 {
		return data, true, nil
	}
	// Size 0 may be a file whose size the system does not know (procfs):
	// read it to its end.
	var buf [512]byte
	for {
		m, err := retry(func() (int, error) { return unix.Read(fd, buf[:]) })
		if err != nil {
			return nil, true, &fs.PathError{Op: "read", Path: rel, Err: err}
		}
		if m == 0 {
			return data, true, nil
		}
		data = append(data, buf[:m]...)
	}
}

// retry repeats a system call a signal interrupted.
func retry(call func() (int, error)) (int, error) {
	for {
		n, err := call()
		if !errors.Is(err, unix.EINTR) {
			return n, err
		}
	}
}
