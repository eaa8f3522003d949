package pack_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
)

// zipFile describes one entry for buildZip. Entries are stored (not
// deflated) unless Deflate is set, so that committed archives do not depend
// on the output of compress/flate, which may change between Go releases.
type zipFile struct {
	Name    string
	Data    []byte
	Mode    fs.FileMode // 0 means 0o644
	Deflate bool
}

func buildZip(tb testing.TB, files ...zipFile) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		h := &zip.FileHeader{Name: f.Name, Method: zip.Store}
		if f.Deflate {
			h.Method = zip.Deflate
		}
		mode := f.Mode
		if mode == 0 {
			mode = 0o644
		}
		h.SetMode(mode)
		w, err := zw.CreateHeader(h)
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := w.Write(f.Data); err != nil {
			tb.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// rawZipFile is an entry written with zip.Writer.CreateRaw: the header says
// whatever the test wants, and Raw is written as the entry's data verbatim.
type rawZipFile struct {
	Header zip.FileHeader
	Raw    []byte
}

func buildRawZip(tb testing.TB, files ...rawZipFile) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		h := f.Header
		w, err := zw.CreateRaw(&h)
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := w.Write(f.Raw); err != nil {
			tb.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// tarFile describes one entry for buildTar. Type 0 means a regular file.
type tarFile struct {
	Name     string
	Data     []byte
	Mode     int64 // 0 means 0o644
	Type     byte
	Linkname string
	Size     int64 // overrides len(Data) in the header when non-zero
}

func buildTar(tb testing.TB, files ...tarFile) []byte {
	tb.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{
			Name:     f.Name,
			Mode:     f.Mode,
			Typeflag: f.Type,
			Linkname: f.Linkname,
			Size:     int64(len(f.Data)),
		}
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if f.Size != 0 {
			h.Size = f.Size
		}
		if err := tw.WriteHeader(h); err != nil {
			tb.Fatal(err)
		}
		if len(f.Data) > 0 {
			if _, err := tw.Write(f.Data); err != nil {
				tb.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func gzipBytes(tb testing.TB, data []byte) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(data); err != nil {
		tb.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// storedDeflate is a raw deflate stream made only of stored blocks, written
// by hand so that its bytes are fixed by the format, not by a compressor.
func storedDeflate(data []byte) []byte {
	var out []byte
	for {
		n := min(len(data), 0xffff)
		final := byte(0)
		if n == len(data) {
			final = 1
		}
		out = append(out, final)
		out = binary.LittleEndian.AppendUint16(out, uint16(n))
		out = binary.LittleEndian.AppendUint16(out, ^uint16(n))
		out = append(out, data[:n]...)
		data = data[n:]
		if final == 1 {
			return out
		}
	}
}

// storedGzip wraps storedDeflate in a gzip member, again byte-for-byte fixed.
func storedGzip(data []byte) []byte {
	out := []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}
	out = append(out, storedDeflate(data)...)
	out = binary.LittleEndian.AppendUint32(out, crc32.ChecksumIEEE(data))
	return binary.LittleEndian.AppendUint32(out, uint32(len(data)))
}

// zeroDeflate returns a raw deflate stream that inflates to mib MiB of zeros
// without compressing them all: one MiB is compressed and sync-flushed (so it
// ends byte-aligned and is not final), and its bytes are repeated. Every back
// reference in a copy points at zeros, so the repetition is valid deflate.
// The stream is left open (no final block) when open is true, so that the
// caller can append more.
func zeroDeflate(tb testing.TB, mib int, open bool) []byte {
	tb.Helper()
	var chunk bytes.Buffer
	fw, err := flate.NewWriter(&chunk, flate.BestCompression)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := fw.Write(make([]byte, 1<<20)); err != nil {
		tb.Fatal(err)
	}
	if err := fw.Flush(); err != nil {
		tb.Fatal(err)
	}
	out := bytes.Repeat(chunk.Bytes(), mib)
	if !open {
		out = append(out, 0x03, 0x00) // empty final block with fixed codes
	}
	return out
}

// crcZeros is the CRC-32 of n zero bytes, computed in pieces to bound memory.
func crcZeros(n int64) uint32 {
	zeros := make([]byte, 1<<20)
	var c uint32
	for n > 0 {
		k := min(n, int64(len(zeros)))
		c = crc32.Update(c, crc32.IEEETable, zeros[:k])
		n -= k
	}
	return c
}

func writeTree(tb testing.TB, root string, files []pack.File) {
	tb.Helper()
	for _, f := range files {
		p := filepath.Join(root, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		mode := fs.FileMode(0o644)
		if f.Exec {
			mode = 0o755
		}
		if err := os.WriteFile(p, f.Data, mode); err != nil {
			tb.Fatal(err)
		}
		// WriteFile applies the umask; the test wants the bits as given.
		if err := os.Chmod(p, mode); err != nil {
			tb.Fatal(err)
		}
	}
}

// assertRefused checks that err carries sentinel (errors.Is) inside a
// *skilld.Error with the given code.
func assertRefused(tb testing.TB, err, sentinel error, code string) {
	tb.Helper()
	if err == nil {
		tb.Fatalf("accepted; want refusal with %v (%s)", sentinel, code)
	}
	if !errors.Is(err, sentinel) {
		tb.Fatalf("error %q (%T) does not wrap %v", err, err, sentinel)
	}
	var se *skilld.Error
	if !errors.As(err, &se) {
		tb.Fatalf("error %q is not a *skilld.Error", err)
	}
	if got := skilld.ErrorCode(err); got != code {
		tb.Fatalf("error %q has code %q, want %q", err, got, code)
	}
}

// checkPackage asserts the invariants every package must satisfy: safe,
// strictly sorted paths within lim, entries that describe the files, and a
// digest recomputable from the entries and parseable back.
func checkPackage(tb testing.TB, p *pack.Package, lim pack.Limits) {
	tb.Helper()
	files := p.Files()
	entries := p.Entries()
	if len(files) != p.Len() || len(entries) != p.Len() {
		tb.Fatalf("Len %d, %d files, %d entries", p.Len(), len(files), len(entries))
	}
	if lim.MaxFiles > 0 && p.Len() > lim.MaxFiles {
		tb.Fatalf("%d files over limit %d", p.Len(), lim.MaxFiles)
	}
	var total int64
	for i, f := range files {
		if err := pack.CheckPath(f.Path); err != nil {
			tb.Fatalf("package holds unsafe path: %v", err)
		}
		if i > 0 && files[i-1].Path >= f.Path {
			tb.Fatalf("paths not strictly sorted: %q then %q", files[i-1].Path, f.Path)
		}
		if lim.MaxDepth > 0 && strings.Count(f.Path, "/")+1 > lim.MaxDepth {
			tb.Fatalf("path %q deeper than %d", f.Path, lim.MaxDepth)
		}
		size := int64(len(f.Data))
		if lim.MaxFileSize > 0 && size > lim.MaxFileSize {
			tb.Fatalf("file %q has %d bytes, over %d", f.Path, size, lim.MaxFileSize)
		}
		total += size
		e := entries[i]
		if e.Path != f.Path || e.Size != size || e.Exec != f.Exec {
			tb.Fatalf("entry %+v does not describe file %q (%d bytes, exec %v)", e, f.Path, size, f.Exec)
		}
		if g, ok := p.File(f.Path); !ok || !bytes.Equal(g.Data, f.Data) {
			tb.Fatalf("File(%q) does not return the file", f.Path)
		}
	}
	if total != p.Size() {
		tb.Fatalf("Size %d, files sum to %d", p.Size(), total)
	}
	if lim.MaxTotalSize > 0 && total > lim.MaxTotalSize {
		tb.Fatalf("total %d over %d", total, lim.MaxTotalSize)
	}
	manifest, digest := pack.BuildManifest(entries)
	if digest != p.Digest() || !bytes.Equal(manifest, p.Manifest()) {
		tb.Fatalf("Digest %s, BuildManifest(Entries()) gives %s", p.Digest(), digest)
	}
	parsed, err := pack.ParseManifest(manifest)
	if err != nil {
		tb.Fatalf("ParseManifest(Manifest()): %v", err)
	}
	if !slices.Equal(parsed, entries) {
		tb.Fatalf("ParseManifest(Manifest()) = %+v, want %+v", parsed, entries)
	}
}

// sampleFiles is a small but realistic skill.
func sampleFiles() []pack.File {
	return []pack.File{
		{Path: "SKILL.md", Data: []byte("---\nname: sample\ndescription: A sample skill.\n---\n\n# Sample\n")},
		{Path: "scripts/run.sh", Data: []byte("#!/bin/sh\necho hello\n"), Exec: true},
		{Path: "reference/notes with spaces.md", Data: []byte("notes\n")},
		{Path: "reference/café.md", Data: []byte("accents\n")},
		{Path: ".env.example", Data: []byte("KEY=\n")},
		{Path: "empty.txt", Data: []byte{}},
	}
}

// mustNew is New that fails the test on error.
func mustNew(tb testing.TB, files []pack.File, lim pack.Limits) *pack.Package {
	tb.Helper()
	p, err := pack.New(files, lim)
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	return p
}

func sha256hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func fmtQ(s string) string { return strconv.Quote(s) }
