package rootfs

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"

	"github.com/klauspost/compress/zstd"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/internal/ctxio"
)

const (
	// maxTrailing bounds what may follow a layer's end-of-archive blocks:
	// tar pads to its record size (10 KiB for GNU tar), nothing more.
	maxTrailing = 1 << 20
	// maxZstdWindow bounds the memory a zstd layer may ask for. zstd's
	// levels use windows of 8 MiB at most; --long=27 uses 128 MiB.
	maxZstdWindow = 128 << 20
	// maxNameLen is PATH_MAX: no longer name can be made on Linux anyway.
	maxNameLen = 4096
	// copyBufSize is the chunk files are written in.
	copyBufSize = 256 << 10
)

// applyLayer applies a layer of the image, hashing its blob as it is
// read. When applying fails, the rest of the blob is still hashed, so that
// a damaged blob is reported as damaged rather than as whatever its damage
// looked like; the tree is thrown away either way. An image over a limit
// is the exception: the blob may be as large as the limit was meant to
// spare reading.
func (u *unpacker) applyLayer(ctx context.Context, a *archive, l layerBlob) error {
	h := sha256.New()
	raw := io.TeeReader(ctxio.Reader(ctx, a.reader(l.span)), h)
	err := u.applyStream(raw)
	if skilld.ErrorCode(err) == skilld.ETOOLARGE {
		return err
	}
	if _, derr := io.Copy(io.Discard, raw); derr != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return unavailablef("reading the image archive: %w", derr)
	}
	if got := "sha256:" + hex.EncodeToString(h.Sum(nil)); got != l.digest {
		return invalidf("the blob does not match its digest %s: it hashes to %s", l.digest, got)
	}
	return err
}

// applyStream decompresses a layer as its first bytes say and applies its
// tar's entries in order.
func (u *unpacker) applyStream(raw io.Reader) error {
	clear(u.layer)
	br := bufio.NewReaderSize(raw, 64<<10)
	head, _ := br.Peek(len(zstdMagic))
	var r io.Reader = br
	switch {
	case bytes.HasPrefix(head, gzipMagic):
		zr, err := gzip.NewReader(br)
		if err != nil {
			return streamError(err)
		}
		defer zr.Close()
		r = zr
	case bytes.HasPrefix(head, zstdMagic):
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxWindow(maxZstdWindow))
		if err != nil {
			return streamError(err)
		}
		defer zr.Close()
		r = zr
	}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return streamError(err)
		}
		if err := u.entry(tr, h); err != nil {
			return err
		}
	}
	// Reading on to the end checks a compressed stream's checksum.
	n, err := io.Copy(io.Discard, io.LimitReader(r, maxTrailing+1))
	if err != nil {
		return streamError(err)
	}
	if n > maxTrailing {
		return invalidf("more than %d bytes follow the end of the layer's tar", maxTrailing)
	}
	return nil
}

// streamError types an error reading a layer's stream: the context's, the
// host's, or (most often) a damaged or truncated layer.
func streamError(err error) error {
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case hostFault(err):
		return unavailablef("reading the image archive: %w", err)
	}
	return invalidf("not a valid layer: %v", err)
}

// entry applies one tar entry.
func (u *unpacker) entry(r io.Reader, h *tar.Header) error {
	u.entries++
	if u.entries > u.lim.MaxFiles {
		return tooLargef("the image has more than %d entries (Limits.MaxFiles)", u.lim.MaxFiles)
	}
	if carriesData(h.Typeflag) {
		u.bytes += h.Size
		if u.bytes > u.lim.MaxBytes {
			return tooLargef("the image has more than %d bytes of file content (Limits.MaxBytes)", u.lim.MaxBytes)
		}
	}
	name, err := cleanName(h.Name)
	if err != nil {
		return invalidf("entry %q %v", h.Name, err)
	}
	dir, base := path.Split(name)
	if strings.HasPrefix(base, whiteoutPrefix) {
		return u.whiteout(path.Clean(dir), base)
	}
	if strings.Contains("/"+dir, "/"+whiteoutPrefix) {
		return nil // inside a whiteout's folder: AUFS bookkeeping
	}
	if name == "." && h.Typeflag != tar.TypeDir {
		return invalidf("entry %q names the root itself", h.Name)
	}
	delete(u.dropped, name)
	switch h.Typeflag {
	case tar.TypeDir:
		err = u.mkdir(name, h)
	case tar.TypeReg:
		err = u.writeFile(name, h, r)
	case tar.TypeSymlink:
		err = u.symlink(name, h.Linkname)
	case tar.TypeLink:
		err = u.hardlink(name, h.Linkname)
	case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
		err = u.drop(name)
	default:
		return nil // global headers, sockets and unknown types make nothing
	}
	if err != nil {
		return err
	}
	u.wrote(name)
	return nil
}

// carriesData reports whether the tar reader gives an entry of type t its
// header's size in data (it gives none to links, devices and folders).
func carriesData(t byte) bool {
	switch t {
	case tar.TypeLink, tar.TypeSymlink, tar.TypeChar, tar.TypeBlock, tar.TypeDir, tar.TypeFifo:
		return false
	}
	return true
}

// cleanName makes an entry's name a path relative to the root, or says
// why it cannot be one: "/usr/bin" and "./usr/bin" are "usr/bin", "a/../b"
// is "b", and the root itself is ".". A name whose ".." leaves the root is
// refused rather than clamped to it as some runtimes do: no image tool
// writes one.
func cleanName(name string) (string, error) {
	switch {
	case name == "":
		return "", errors.New("has no name")
	case len(name) > maxNameLen:
		return "", errors.New("is longer than PATH_MAX")
	case strings.IndexByte(name, 0) >= 0:
		return "", errors.New("has a NUL byte in its name")
	}
	c := path.Clean(strings.TrimLeft(name, "/"))
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", errors.New("leaves the root")
	}
	return c, nil
}

func (u *unpacker) mkdir(name string, h *tar.Header) error {
	meta := dirMeta{mode: dirMode(h.Mode), mtime: h.ModTime}
	if name != "." {
		if err := u.parents(name); err != nil {
			return entryError(name, err)
		}
		fi, err := u.root.Lstat(name)
		switch {
		case err == nil && fi.IsDir():
			// A lower layer's folder: the two merge.
		case err == nil || errors.Is(err, fs.ErrNotExist):
			if err := u.clear(name); err != nil {
				return entryError(name, err)
			}
			if err := u.root.Mkdir(name, 0o700); err != nil {
				return entryError(name, err)
			}
		default:
			return entryError(name, err)
		}
		u.known[name] = true
	}
	u.dirs[name] = meta
	return nil
}

func (u *unpacker) writeFile(name string, h *tar.Header, r io.Reader) error {
	if err := u.clear(name); err != nil {
		return entryError(name, err)
	}
	f, err := u.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return entryError(name, err)
	}
	defer f.Close()
	for {
		n, rerr := r.Read(u.buf)
		if n > 0 {
			if _, err := f.Write(u.buf[:n]); err != nil {
				return entryError(name, err)
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return streamError(rerr)
		}
	}
	// Chmod, not the open's mode, which the umask trims.
	if err := f.Chmod(fileMode(h.Mode)); err != nil {
		return entryError(name, err)
	}
	if err := f.Close(); err != nil {
		return entryError(name, err)
	}
	if !h.ModTime.IsZero() {
		if err := u.root.Chtimes(name, h.ModTime, h.ModTime); err != nil {
			return entryError(name, err)
		}
	}
	return nil
}

// symlink makes a link as the image has it; its target is never followed
// here, and is resolved inside the sandbox when it runs.
func (u *unpacker) symlink(name, target string) error {
	if target == "" || strings.IndexByte(target, 0) >= 0 || len(target) > maxNameLen {
		return invalidf("entry %q: symbolic link with an invalid target", name)
	}
	if err := u.clear(name); err != nil {
		return entryError(name, err)
	}
	if err := u.root.Symlink(target, name); err != nil {
		return entryError(name, err)
	}
	return nil
}

// hardlink links name to a file already in the tree. The target's name is
// cleaned as an entry's is, and os.Root resolves it inside the tree, so no
// host file can be linked in.
func (u *unpacker) hardlink(name, linkname string) error {
	target, err := cleanName(linkname)
	if err != nil {
		return invalidf("entry %q: hard link to %q %v", name, linkname, err)
	}
	switch {
	case target == name:
		return nil
	case u.dropped[target]:
		return u.drop(name) // a link to a device is a device
	}
	if err := u.clear(name); err != nil {
		return entryError(name, err)
	}
	if err := u.root.Link(target, name); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return invalidf("entry %q: hard link to %q, which is not in the image", name, linkname)
		}
		return entryError(name, err)
	}
	return nil
}

// drop stands for an entry that is not created (a device, a FIFO): it
// still hides what lower layers had at its name.
func (u *unpacker) drop(name string) error {
	if err := u.clear(name); err != nil {
		return entryError(name, err)
	}
	u.dropped[name] = true
	return nil
}

// fileMode keeps a file's permission bits, without set-uid, set-gid and
// sticky.
func fileMode(mode int64) fs.FileMode {
	return fs.FileMode(mode) & fs.ModePerm
}

// dirMode keeps a folder's permission bits and sticky bit, without set-uid
// and set-gid.
func dirMode(mode int64) fs.FileMode {
	m := fs.FileMode(mode) & fs.ModePerm
	if mode&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	return m
}
