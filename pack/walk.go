package pack

import (
	"archive/tar"
	"context"
	"io"
	"io/fs"

	"github.com/skilld/skilld/internal/ctxio"
)

// TarEntryType is the kind of an entry reported by WalkTarGz.
type TarEntryType uint8

const (
	TarFile     TarEntryType = iota + 1 // a regular file
	TarDir                              // a folder
	TarSymlink                          // a symbolic link
	TarHardlink                         // a hard link
	TarOther                            // a device, FIFO, sparse file or unknown type
)

// TarEntry is one entry of a tar stream as WalkTarGz reports it. It is only
// valid during the callback that received it: the walker streams the
// archive and does not keep entry data.
type TarEntry struct {
	// Path is the entry name with any leading "./" removed and, for
	// folders, trailing "/" removed. It is deliberately not checked: a
	// caller that only uses part of an archive (one folder of a repository)
	// should not fail on an odd name elsewhere. Call CheckPath on every
	// path that becomes part of a package.
	Path string
	Type TarEntryType
	// Size is the size the header declares. Check it against your limits
	// before calling ReadData, which reads that many bytes.
	Size int64
	// Mode holds the permission bits (and type bits) from the header.
	Mode fs.FileMode

	typeflag byte
	data     io.Reader
	fail     func(cause error, format string, args ...any) error
}

// Unsupported returns nil for files and folders, and for any other entry an
// error wrapping ErrUnsupportedEntry (code EINVALID) that names it and says
// why links and devices cannot be part of a package.
func (e TarEntry) Unsupported() error {
	if e.Type == TarFile || e.Type == TarDir {
		return nil
	}
	return errUnsupported("archive entry", e.Path, unsupportedTarType(e.typeflag))
}

// ReadData reads the data of a TarFile entry: exactly Size bytes, or an
// ErrBadArchive error when the stream ends early (or the ratio guard's
// ErrCompressionRatio error when the stream turns out to be a bomb).
func (e TarEntry) ReadData() ([]byte, error) {
	if e.Type != TarFile {
		return nil, nil
	}
	data, err := readBounded(e.data, e.Size)
	if err != nil {
		return nil, e.fail(err, "archive entry %q is corrupt or truncated (%v)", e.Path, err)
	}
	if int64(len(data)) != e.Size {
		// The tar reader frames entries by the header size, so this only
		// happens if the stream ends early.
		return nil, e.fail(nil, "archive entry %q is truncated", e.Path)
	}
	return data, nil
}

// WalkTarGz streams a gzip-compressed tar archive and calls fn for each
// entry in archive order, for callers that must not hold the whole archive
// as one package: it keeps nothing but the entry at hand, so a large
// repository archive can be scanned for the few folders a caller needs.
//
// It applies the stream-level safety of ReadTarGz: the inflated stream may
// not outgrow maxRatio times the compressed bytes once past
// RatioCheckMinSize (maxRatio <= 0 disables that), the gzip checksum is
// verified after the last entry, and the context is checked on every read.
// Global pax headers (archive metadata, such as the commit id GitHub
// records) and macOS junk files are not reported, as ReadTarGz ignores
// them too. Data an fn does not read is skipped.
//
// An error from fn stops the walk and is returned as is.
func WalkTarGz(ctx context.Context, r io.Reader, maxRatio int64, fn func(e TarEntry) error) error {
	return inflate(ctx, r, maxRatio, func(g *ratioGuard) error {
		return walkTar(ctx, g, g, func(e TarEntry) error {
			if e.Type != TarDir && skipped(e.Path) {
				return nil
			}
			return fn(e)
		})
	})
}

// walkTar calls fn for every entry of the tar stream r but global pax
// headers, unchecked and unfiltered: what both WalkTarGz and the package
// readers start from. g is the ratio guard r reads through, or nil.
func walkTar(ctx context.Context, r io.Reader, g *ratioGuard, fn func(e TarEntry) error) error {
	// fail prefers the guard's verdict and the context's: the tar reader
	// reports a failed read of the stream below it as a generic error.
	fail := func(cause error, format string, args ...any) error {
		if g != nil && g.err != nil {
			return g.err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return errBadArchive(cause, format, args...)
	}
	tr := tar.NewReader(ctxio.Reader(ctx, r))
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fail(err, "not a valid tar archive (%v)", err)
		}
		if hdr.Typeflag == tar.TypeXGlobalHeader {
			// Metadata for the whole archive, such as the commit id that
			// `git archive` (and so every GitHub tarball) records.
			continue
		}
		e := TarEntry{
			Path:     trimDotSlash(hdr.Name),
			Size:     hdr.Size,
			Mode:     hdr.FileInfo().Mode(),
			typeflag: hdr.Typeflag,
			data:     tr,
			fail:     fail,
		}
		switch hdr.Typeflag {
		case tar.TypeReg:
			e.Type = TarFile
		case tar.TypeDir:
			e.Type = TarDir
			e.Path = trimTrailingSlash(e.Path)
		case tar.TypeSymlink:
			e.Type = TarSymlink
		case tar.TypeLink:
			e.Type = TarHardlink
		default:
			e.Type = TarOther
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	if g != nil && g.err != nil {
		return g.err
	}
	return nil
}
