package rootfs

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path"
	"strings"
)

const (
	// maxArchiveEntries bounds the entries of an image archive. One image
	// of MaxLayers layers needs a few per layer (docker's legacy layout
	// writes four), so a larger archive is not an image archive and its
	// index would only cost memory.
	maxArchiveEntries = 10_000
	// maxJSONSize bounds index.json, manifest.json, manifests and configs,
	// which are read whole. Real ones are a few KiB; a config with a long
	// history stays under 100 KiB.
	maxJSONSize = 4 << 20
	// maxLinkHops bounds the links followed to find a file of the archive
	// (docker save links a layer.tar it already wrote from the next image
	// folder that holds the same layer).
	maxLinkHops = 8
)

var (
	gzipMagic = []byte{0x1f, 0x8b}
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

// archive is an image archive open for reading. A tar has no index, so it
// is read once to note where each file's bytes are; blobs are then read in
// place, in any order, as often as needed.
type archive struct {
	f     *os.File
	files map[string]span   // regular files by cleaned name
	links map[string]string // links by cleaned name → the name they stand for
}

// span is where a file's bytes are in the archive.
type span struct{ off, size int64 }

// openArchive opens and indexes the archive at name.
func openArchive(ctx context.Context, name string) (*archive, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, invalidf("cannot open the image archive: %w", err)
	}
	a := &archive{f: f, files: map[string]span{}, links: map[string]string{}}
	if err := a.index(ctx); err != nil {
		f.Close()
		return nil, err
	}
	return a, nil
}

func (a *archive) close() { a.f.Close() }

// index reads the tar's headers. The tar reader is given the *os.File
// itself: it reads no further than each header and seeks over the data, so
// the file's offset after Next is where the entry's data starts.
func (a *archive) index(ctx context.Context) error {
	st, err := a.f.Stat()
	if err != nil {
		return unavailablef("reading the image archive: %w", err)
	}
	if !st.Mode().IsRegular() {
		return invalidf("the image archive is not a regular file")
	}
	var head [4]byte
	n, _ := io.ReadFull(a.f, head[:])
	switch {
	case bytes.HasPrefix(head[:n], gzipMagic):
		return invalidf("the image archive is gzip-compressed: decompress it first (gunzip)")
	case bytes.HasPrefix(head[:n], zstdMagic):
		return invalidf("the image archive is zstd-compressed: decompress it first (unzstd)")
	}
	if _, err := a.f.Seek(0, io.SeekStart); err != nil {
		return unavailablef("reading the image archive: %w", err)
	}
	tr := tar.NewReader(a.f)
	for entries := 0; ; entries++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return invalidf("the image archive is not a valid tar file: %v", err)
		}
		if entries >= maxArchiveEntries {
			return tooLargef("the image archive has more than %d entries; an archive of one image has a few per layer", maxArchiveEntries)
		}
		name := archiveName(h.Name)
		switch h.Typeflag {
		case tar.TypeReg:
			off, err := a.f.Seek(0, io.SeekCurrent)
			if err != nil {
				return unavailablef("reading the image archive: %w", err)
			}
			if h.Size > st.Size()-off {
				return invalidf("the image archive is truncated: %q needs %d bytes", h.Name, h.Size)
			}
			a.files[name] = span{off, h.Size}
			delete(a.links, name)
		case tar.TypeSymlink:
			if !path.IsAbs(h.Linkname) {
				a.links[name] = archiveName(path.Join(path.Dir(name), h.Linkname))
				delete(a.files, name)
			}
		case tar.TypeLink:
			a.links[name] = archiveName(h.Linkname)
			delete(a.files, name)
		}
	}
	if len(a.files) == 0 {
		return invalidf("the image archive holds no files")
	}
	return nil
}

// archiveName is how the index keys a name of the archive: "./x", "/x"
// and "x" are one file. Names that leave the archive's top match nothing.
func archiveName(name string) string {
	return path.Clean("/" + name)[1:]
}

// lookup finds the file name stands for, following links.
func (a *archive) lookup(name string) (span, bool) {
	for range maxLinkHops + 1 {
		if s, ok := a.files[name]; ok {
			return s, true
		}
		to, ok := a.links[name]
		if !ok {
			break
		}
		name = to
	}
	return span{}, false
}

// reader reads one file of the archive.
func (a *archive) reader(s span) io.Reader {
	return io.NewSectionReader(a.f, s.off, s.size)
}

// blobPath is where an OCI layout keeps the blob of a sha256 digest.
func blobPath(hexSum string) string { return "blobs/sha256/" + hexSum }

// readJSON reads the small JSON document name into v, after checking its
// size against size (when not zero) and its SHA-256 against digest (when
// not empty). what says what the document is, for messages.
func (a *archive) readJSON(name, what, digest string, size int64, v any) error {
	s, ok := a.lookup(name)
	if !ok {
		return invalidf("%s (%s) is not in the archive", what, name)
	}
	if size != 0 && s.size != size {
		return invalidf("%s (%s) is %d bytes, its descriptor says %d", what, name, s.size, size)
	}
	if s.size > maxJSONSize {
		return invalidf("%s (%s) is %d bytes, over the %d allowed", what, name, s.size, maxJSONSize)
	}
	b := make([]byte, s.size)
	if _, err := io.ReadFull(a.reader(s), b); err != nil {
		return unavailablef("reading %s (%s): %w", what, name, err)
	}
	if digest != "" {
		sum := sha256.Sum256(b)
		if got := "sha256:" + hex.EncodeToString(sum[:]); got != digest {
			return invalidf("%s (%s) does not match its digest %s: it hashes to %s", what, name, digest, got)
		}
	}
	if err := json.Unmarshal(b, v); err != nil {
		return invalidf("%s (%s) is not valid JSON: %v", what, name, err)
	}
	return nil
}

// parseDigest checks an OCI digest and returns its hex part. Only sha256
// is taken: it is what every tool writes, and the store is named by it.
func parseDigest(d string) (string, error) {
	alg, hexSum, _ := strings.Cut(d, ":")
	if alg != "sha256" {
		return "", invalidf("digest %q: only sha256 digests are supported", d)
	}
	if !isHex64(hexSum) {
		return "", invalidf("digest %q is malformed", d)
	}
	return hexSum, nil
}

// isHex64 reports whether s is 64 lowercase hex digits, as a sha256
// digest's hex part must be (so that it is safe as a file name, too).
func isHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range []byte(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
