//go:build unix

package skillmd

import (
	"io/fs"
	"slices"

	"golang.org/x/sys/unix"
)

// smallFile is how much of a skill file readText reads into a buffer of
// its own frame, from which the text is copied to its exact size. Most
// SKILL.md files fit; a larger one is read on into the heap.
const smallFile = 8 << 10

// readText reads the file at path to its end: open, read until a read
// returns nothing, close. os.ReadFile makes six more system calls (a stat,
// and five to offer the file to the runtime's poller, which refuses a
// regular file, and to undo the offer), each a large part of reading a
// small file. O_NONBLOCK keeps a FIFO from blocking the open; what is not
// a regular file either fails to read (a folder), or is no skill file (a
// FIFO reads empty), or runs into MaxFileSize (a device).
func readText(path string) (string, error) {
	fd, err := retry(func() (int, error) {
		return unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return "", readError(&fs.PathError{Op: "open", Path: path, Err: err})
	}
	defer unix.Close(fd)
	var small [smallFile]byte
	n, err := readFull(fd, small[:])
	if err != nil {
		return "", readError(&fs.PathError{Op: "read", Path: path, Err: err})
	}
	if n < len(small) {
		return string(small[:n]), nil
	}
	data := append(make([]byte, 0, 4*smallFile), small[:]...)
	for {
		if len(data) > MaxFileSize {
			return "", tooLarge(path)
		}
		if len(data) == cap(data) {
			data = slices.Grow(data, len(data))
		}
		m, err := readFull(fd, data[len(data):min(cap(data), MaxFileSize+1)])
		if err != nil {
			return "", readError(&fs.PathError{Op: "read", Path: path, Err: err})
		}
		data = data[:len(data)+m]
		if len(data) < cap(data) && len(data) <= MaxFileSize {
			return string(data), nil
		}
	}
}

// readFull reads into buf until it is full or a read returns nothing (the
// end of the file), and returns how much it read.
func readFull(fd int, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := retry(func() (int, error) { return unix.Read(fd, buf[n:]) })
		if err != nil {
			return n, err
		}
		if m == 0 {
			break
		}
		n += m
	}
	return n, nil
}
