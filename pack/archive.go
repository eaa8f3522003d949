package pack

import (
	"bytes"
	"context"
	"io"

	"github.com/skilld/skilld"
)

// ReadArchive reads a zip, tar.gz or plain tar archive, chosen by its magic
// bytes rather than by a file name or content type, which the uploader
// controls and which lie as often as not.
func ReadArchive(ctx context.Context, r io.ReaderAt, size int64, lim Limits) (*Package, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var head [512]byte
	n, err := r.ReadAt(head[:min(int64(len(head)), max(size, 0))], 0)
	if err != nil && err != io.EOF {
		return nil, skilld.Errorf(skilld.EINVALID, "reading archive: %w", err)
	}
	h := head[:n]
	switch {
	case bytes.HasPrefix(h, []byte("PK\x03\x04")), bytes.HasPrefix(h, []byte("PK\x05\x06")):
		return ReadZip(ctx, r, size, lim)
	case bytes.HasPrefix(h, []byte{0x1f, 0x8b}):
		return ReadTarGz(ctx, io.NewSectionReader(r, 0, size), lim)
	case len(h) >= 262 && string(h[257:262]) == "ustar":
		return ReadTar(ctx, io.NewSectionReader(r, 0, size), lim)
	}
	return nil, errBadArchive(nil, "unsupported archive format; use zip, tar.gz or tar")
}
