package pack

import (
	"archive/zip"
	"compress/flate"
	"context"
	"errors"
	"hash/crc32"
	"io"
	"io/fs"
	"math"
	"math/bits"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/internal/ctxio"
)

// ReadZip reads a zip archive of size bytes from r into a package.
//
// The central directory is checked in full before any file data is read:
// entry types, encryption, compression methods, paths, the file count, the
// declared sizes and the per-entry compression ratio. Each entry is then
// inflated with its declared size as a hard bound and must produce exactly
// that many bytes with the declared CRC-32. Skipped entries (__MACOSX,
// AppleDouble "._" files, folders) are never inflated.
func ReadZip(ctx context.Context, r io.ReaderAt, size int64, lim Limits) (*Package, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	zr, err := zip.NewReader(r, size)
	// ErrInsecurePath (GODEBUG zipinsecurepath=0) comes with a usable
	// reader; CheckPath below refuses the same names with a better message.
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, errBadArchive(err, "not a valid zip archive (%v)", err)
	}

	type item struct {
		f    *zip.File
		path string
		size int64
	}
	var items []item
	b := budget{lim: lim}
	for _, f := range zr.File {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		mode := f.Mode()
		name := trimDotSlash(f.Name)
		isDir := mode.IsDir() || strings.HasSuffix(name, "/")
		if isDir {
			// Folders create nothing, but a hostile folder name is still
			// a sign of a hostile archive, so it is checked all the same.
			if name = strings.TrimSuffix(name, "/"); name == "" || name == "." {
				continue
			}
		}
		if err := CheckPath(name); err != nil {
			return nil, err
		}
		if isDir || skipped(name) {
			continue
		}
		if why := unsupportedMode(mode); why != "" {
			return nil, errUnsupported("archive entry", name, why)
		}
		if f.Flags&0x1 != 0 {
			return nil, errUnsupported("archive entry", name,
				"is encrypted; encrypted entries cannot be checked and are not allowed in skill packages")
		}
		if f.Method != zip.Store && f.Method != zip.Deflate {
			return nil, errBadArchive(nil,
				"archive entry %q uses compression method %d; only stored and deflated entries are supported", name, f.Method)
		}
		if ratioExceeded(f.UncompressedSize64, f.CompressedSize64, lim.MaxRatio) {
			return nil, newError(skilld.ETOOLARGE, ErrCompressionRatio, nil,
				"archive entry %q would expand from %d to %d bytes, over the %d:1 compression ratio limit",
				name, f.CompressedSize64, f.UncompressedSize64, lim.MaxRatio)
		}
		declared := int64(min(f.UncompressedSize64, math.MaxInt64-1))
		if err := b.admit(name, declared); err != nil {
			return nil, err
		}
		items = append(items, item{f, name, declared})
	}

	files := make([]File, 0, len(items))
	var inf inflater
	defer inf.close()
	for _, it := range items {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		data, err := readZipEntry(ctx, &inf, it.f, it.path, it.size)
		if err != nil {
			return nil, err
		}
		files = append(files, File{Path: it.path, Data: data, Exec: it.f.Mode()&0o111 != 0})
	}
	return finish(files, lim, true)
}

// readZipEntry inflates one entry itself instead of using zip.File.Open, so
// that an entry producing more than its declared size is reported as such
// and stopped one byte past it, and so that the CRC from the central
// directory is always checked.
func readZipEntry(ctx context.Context, inf *inflater, f *zip.File, path string, want int64) ([]byte, error) {
	raw, err := f.OpenRaw()
	if err != nil {
		return nil, errBadArchive(err, "archive entry %q is corrupt (%v)", path, err)
	}
	src := raw
	if f.Method == zip.Deflate {
		src = inf.reader(raw)
	}
	data, err := readBounded(ctxio.Reader(ctx, src), want)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, errBadArchive(err, "archive entry %q is corrupt or truncated (%v)", path, err)
	}
	switch n := int64(len(data)); {
	case n > want:
		return nil, errBadArchive(nil, "archive entry %q expands to more than the %d bytes its header declares", path, want)
	case n < want:
		return nil, errBadArchive(nil, "archive entry %q holds %d bytes, fewer than the %d bytes its header declares", path, n, want)
	}
	if crc32.ChecksumIEEE(data) != f.CRC32 {
		return nil, errBadArchive(nil, "archive entry %q is corrupt (CRC-32 mismatch)", path)
	}
	return data, nil
}

// inflater reuses one deflate decompressor for all entries of an archive;
// a fresh one per entry allocates about 40 KiB of tables and window, which
// for a few hundred small files costs more than the data itself.
type inflater struct{ fr io.ReadCloser }

func (in *inflater) reader(r io.Reader) io.Reader {
	if in.fr == nil {
		in.fr = flate.NewReader(r)
	} else {
		// Reset cannot fail for flate: its error result is always nil.
		_ = in.fr.(flate.Resetter).Reset(r, nil)
	}
	return in.fr
}

func (in *inflater) close() {
	if in.fr != nil {
		in.fr.Close()
	}
}

// ratioExceeded reports whether uncompressed/compressed is over max. A
// compressed size of 0 with data behind it counts as an infinite ratio.
func ratioExceeded(uncompressed, compressed uint64, max int64) bool {
	if max <= 0 || uncompressed <= RatioCheckMinSize {
		return false
	}
	if compressed == 0 {
		return true
	}
	hi, lo := bits.Mul64(uint64(max), compressed)
	return hi == 0 && uncompressed > lo
}

// unsupportedMode explains why an entry of this mode cannot be part of a
// package, or returns "" for a regular file. Links are refused outright
// rather than resolved: following them is how archives escape their folder.
func unsupportedMode(mode fs.FileMode) string {
	switch {
	case mode&fs.ModeSymlink != 0:
		return "is a symbolic link; links are not allowed in skill packages"
	case mode&fs.ModeCharDevice != 0:
		return "is a character device; only regular files are allowed in skill packages"
	case mode&fs.ModeDevice != 0:
		return "is a block device; only regular files are allowed in skill packages"
	case mode&fs.ModeNamedPipe != 0:
		return "is a FIFO (named pipe); only regular files are allowed in skill packages"
	case mode&fs.ModeSocket != 0:
		return "is a socket; only regular files are allowed in skill packages"
	case mode&fs.ModeIrregular != 0:
		return "is not a regular file; only regular files are allowed in skill packages"
	}
	return ""
}
