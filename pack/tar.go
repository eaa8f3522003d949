package pack

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"io"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/internal/ctxio"
)

// ReadTar reads an uncompressed tar stream into a package. A tar has no
// index, so limits are enforced entry by entry from the header sizes before
// each entry's data is read; the first entry over a limit stops the read.
func ReadTar(ctx context.Context, r io.Reader, lim Limits) (*Package, error) {
	return readTar(ctx, r, lim, nil)
}

// ReadTarGz reads a gzip-compressed tar stream into a package. On top of the
// ReadTar checks, the whole stream is watched as it inflates: once it has
// produced more than RatioCheckMinSize bytes it may not exceed MaxRatio
// times the compressed bytes consumed. That catches bombs hidden in data the
// package never keeps (skipped entries, folder entries with data) which the
// per-file and total limits do not see.
func ReadTarGz(ctx context.Context, r io.Reader, lim Limits) (*Package, error) {
	var p *Package
	err := inflate(ctx, r, lim.MaxRatio, func(g *ratioGuard) error {
		var err error
		p, err = readTar(ctx, g, lim, g)
		return err
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// readTar applies the package rules to the entries of a tar stream. g is the
// ratio guard r reads through, or nil for an uncompressed stream.
func readTar(ctx context.Context, r io.Reader, lim Limits, g *ratioGuard) (*Package, error) {
	b := budget{lim: lim}
	var files []File
	err := walkTar(ctx, r, g, func(e TarEntry) error {
		if e.Type == TarDir {
			// "." is the archive root itself, as `tar -cf x.tar .` may
			// write it. Other folders create nothing, but a hostile folder
			// name is still a sign of a hostile archive.
			if e.Path == "" || e.Path == "." {
				return nil
			}
			return CheckPath(e.Path)
		}
		if err := CheckPath(e.Path); err != nil {
			return err
		}
		if skipped(e.Path) {
			return nil
		}
		if err := e.Unsupported(); err != nil {
			return err
		}
		if err := b.admit(e.Path, e.Size); err != nil {
			return err
		}
		data, err := e.ReadData()
		if err != nil {
			return err
		}
		files = append(files, File{Path: e.Path, Data: data, Exec: e.Mode&0o111 != 0})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return finish(files, lim, true)
}

// inflate runs read over the gzip stream r as it inflates under a ratio
// guard, then reads the stream on to its end. The tar reader stops at the
// end-of-archive marker, before gzip has checked its CRC; reading on (still
// under the guard) is what tells a corrupted stream from an intact one.
func inflate(ctx context.Context, r io.Reader, maxRatio int64, read func(g *ratioGuard) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	in := &countingReader{r: ctxio.Reader(ctx, r)}
	zr, err := gzip.NewReader(in)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return errBadArchive(err, "not a valid gzip stream (%v)", err)
	}
	defer zr.Close()
	g := &ratioGuard{r: zr, in: in, max: maxRatio}
	if err := read(g); err != nil {
		return err
	}
	if _, err := io.Copy(io.Discard, g); err != nil {
		if g.err != nil {
			return g.err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return errBadArchive(err, "gzip stream is corrupt (%v)", err)
	}
	return nil
}

func trimTrailingSlash(name string) string {
	for len(name) > 0 && name[len(name)-1] == '/' {
		name = name[:len(name)-1]
	}
	return name
}

// unsupportedTarType explains why an entry type cannot be part of a package,
// or returns "" for a regular file. Unknown types are refused rather than
// guessed at: each extension means something different to another tool.
func unsupportedTarType(t byte) string {
	switch t {
	case tar.TypeReg:
		return ""
	case tar.TypeSymlink:
		return "is a symbolic link; links are not allowed in skill packages"
	case tar.TypeLink:
		return "is a hard link; links are not allowed in skill packages"
	case tar.TypeChar:
		return "is a character device; only regular files are allowed in skill packages"
	case tar.TypeBlock:
		return "is a block device; only regular files are allowed in skill packages"
	case tar.TypeFifo:
		return "is a FIFO (named pipe); only regular files are allowed in skill packages"
	case tar.TypeGNUSparse:
		return "is a sparse file; only regular files are allowed in skill packages"
	}
	return "has an unsupported entry type; only regular files and folders are allowed in skill packages"
}

// countingReader counts the compressed bytes handed to the decompressor.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// ratioGuard sits on the inflated side of a stream and fails it when the
// bytes produced outgrow max times the compressed bytes consumed. The
// decompressor reads ahead in blocks, so consumed runs a few KiB ahead of
// what was really needed; that errs on the side of accepting.
type ratioGuard struct {
	r   io.Reader
	in  *countingReader
	max int64
	out int64
	err error
}

func (g *ratioGuard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	n, err := g.r.Read(p)
	g.out += int64(n)
	if ratioExceeded(uint64(g.out), uint64(g.in.n), g.max) {
		g.err = newError(skilld.ETOOLARGE, ErrCompressionRatio, nil,
			"compressed archive expands more than %d:1 (%d bytes from %d); refusing a likely decompression bomb",
			g.max, g.out, g.in.n)
		return n, g.err
	}
	return n, err
}
