package pack_test

import (
	"bytes"
	"compress/flate"
	"context"
	"fmt"
	"hash/crc32"
	"strings"
	"testing"

	"archive/zip"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
)

func TestLimitPresets(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct{ got, want pack.Limits }{
		"inline":  {pack.InlineLimits(), pack.Limits{MaxFiles: 200, MaxFileSize: 5 << 20, MaxTotalSize: 5 << 20, MaxDepth: 10, MaxPathLen: 1024, MaxRatio: 100}},
		"archive": {pack.ArchiveLimits(), pack.Limits{MaxFiles: 1000, MaxFileSize: 10 << 20, MaxTotalSize: 50 << 20, MaxDepth: 32, MaxPathLen: 1024, MaxRatio: 100}},
		"github":  {pack.GitHubLimits(), pack.Limits{MaxFiles: 200, MaxFileSize: 10 << 20, MaxTotalSize: 10 << 20, MaxDepth: 32, MaxPathLen: 1024, MaxRatio: 100}},
	} {
		if c.got != c.want {
			t.Errorf("%s: %+v, want %+v", name, c.got, c.want)
		}
	}
	if pack.GitHubMaxArchiveSize != 25<<20 {
		t.Errorf("GitHubMaxArchiveSize = %d", pack.GitHubMaxArchiveSize)
	}
}

// limitCase is a file set exactly at a limit; over adds one to it.
type limitCase struct {
	name     string
	at, over []pack.File
	sentinel error
	code     string
}

// limitCases builds, for lim, one case per limit: a file set exactly at it
// and one exceeding it by one (file, byte, level or path byte). data is
// shared between files to keep big cases cheap.
func limitCases(lim pack.Limits) []limitCase {
	blob := make([]byte, max(lim.MaxFileSize, lim.MaxTotalSize)+1)
	for i := range blob {
		blob[i] = byte(i * 7)
	}
	named := func(n int, size int64) []pack.File {
		fs := make([]pack.File, n)
		for i := range fs {
			fs[i] = pack.File{Path: fmt.Sprintf("f%05d", i), Data: blob[:size]}
		}
		return fs
	}
	// total splits lim.MaxTotalSize+extra bytes over files at most
	// MaxFileSize each.
	total := func(extra int64) []pack.File {
		left := lim.MaxTotalSize + extra
		var fs []pack.File
		for i := 0; left > 0; i++ {
			n := min(left, lim.MaxFileSize)
			fs = append(fs, pack.File{Path: fmt.Sprintf("t%03d", i), Data: blob[:n]})
			left -= n
		}
		return fs
	}
	deep := func(levels int) []pack.File {
		return []pack.File{{Path: "SKILL.md"}, {Path: strings.Repeat("d/", levels-1) + "f"}}
	}
	long := func(n int) []pack.File {
		return []pack.File{{Path: "SKILL.md"}, {Path: "dir/" + strings.Repeat("x", n-4)}}
	}
	return []limitCase{
		{"files", named(lim.MaxFiles, 0), named(lim.MaxFiles+1, 0), pack.ErrTooManyFiles, skilld.ETOOLARGE},
		{"file size", named(1, lim.MaxFileSize), named(1, lim.MaxFileSize+1), pack.ErrFileTooLarge, skilld.ETOOLARGE},
		{"total size", total(0), total(1), pack.ErrTooLarge, skilld.ETOOLARGE},
		{"depth", deep(lim.MaxDepth), deep(lim.MaxDepth + 1), pack.ErrUnsafePath, skilld.EINVALID},
		{"path length", long(lim.MaxPathLen), long(lim.MaxPathLen + 1), pack.ErrUnsafePath, skilld.EINVALID},
	}
}

func TestNewLimits(t *testing.T) {
	t.Parallel()
	presets := map[string]pack.Limits{
		"inline":  pack.InlineLimits(),
		"archive": pack.ArchiveLimits(),
		"github":  pack.GitHubLimits(),
		"small":   {MaxFiles: 3, MaxFileSize: 10, MaxTotalSize: 25, MaxDepth: 3, MaxPathLen: 20},
	}
	for pname, lim := range presets {
		for _, c := range limitCases(lim) {
			t.Run(pname+"/"+c.name, func(t *testing.T) {
				p, err := pack.New(c.at, lim)
				if err != nil {
					t.Fatalf("at the limit: %v", err)
				}
				checkPackage(t, p, lim)
				_, err = pack.New(c.over, lim)
				assertRefused(t, err, c.sentinel, c.code)
			})
		}
	}
}

func TestZeroLimitsMeanUnlimited(t *testing.T) {
	t.Parallel()
	files := make([]pack.File, 2000)
	for i := range files {
		files[i] = pack.File{Path: strings.Repeat("d/", 40) + fmt.Sprint(i), Data: []byte("x")}
	}
	p := mustNew(t, files, pack.Limits{})
	if p.Len() != 2000 {
		t.Fatalf("Len %d", p.Len())
	}
	// MaxPathLen 0 still means CheckPath's cap.
	_, err := pack.New([]pack.File{{Path: strings.Repeat("x", pack.MaxPathLen+1)}}, pack.Limits{})
	assertRefused(t, err, pack.ErrUnsafePath, skilld.EINVALID)
}

// TestReaderLimits runs the same at/over cases through every reader with
// small limits, so that the readers' own early checks (declared sizes,
// counts) agree with New's.
func TestReaderLimits(t *testing.T) {
	t.Parallel()
	lim := pack.Limits{MaxFiles: 4, MaxFileSize: 100, MaxTotalSize: 250, MaxDepth: 4, MaxPathLen: 40, MaxRatio: 100}
	ctx := context.Background()
	readers := map[string]func(t *testing.T, fs []pack.File) (*pack.Package, error){
		"zip": func(t *testing.T, fs []pack.File) (*pack.Package, error) {
			var zs []zipFile
			for _, f := range fs {
				zs = append(zs, zipFile{Name: f.Path, Data: f.Data, Deflate: true})
			}
			b := buildZip(t, zs...)
			return pack.ReadZip(ctx, bytes.NewReader(b), int64(len(b)), lim)
		},
		"tar": func(t *testing.T, fs []pack.File) (*pack.Package, error) {
			return pack.ReadTar(ctx, bytes.NewReader(tarOf(t, fs)), lim)
		},
		"tar.gz": func(t *testing.T, fs []pack.File) (*pack.Package, error) {
			return pack.ReadTarGz(ctx, bytes.NewReader(gzipBytes(t, tarOf(t, fs))), lim)
		},
		"dir": func(t *testing.T, fs []pack.File) (*pack.Package, error) {
			dir := t.TempDir()
			writeTree(t, dir, fs)
			return pack.ReadDir(ctx, dir, lim)
		},
	}
	for rname, read := range readers {
		for _, c := range limitCases(lim) {
			t.Run(rname+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				p, err := read(t, c.at)
				if err != nil {
					t.Fatalf("at the limit: %v", err)
				}
				checkPackage(t, p, lim)
				_, err = read(t, c.over)
				assertRefused(t, err, c.sentinel, c.code)
			})
		}
	}
}

func tarOf(tb testing.TB, fs []pack.File) []byte {
	var ts []tarFile
	for _, f := range fs {
		mode := int64(0o644)
		if f.Exec {
			mode = 0o755
		}
		ts = append(ts, tarFile{Name: f.Path, Data: f.Data, Mode: mode})
	}
	return buildTar(tb, ts...)
}

// TestZipRatioLimit checks the per-entry ratio at and just over 100:1 with an
// entry whose compressed data is padded to an exact size.
func TestZipRatioLimit(t *testing.T) {
	t.Parallel()
	const compressed = 21000
	entry := func(t *testing.T, size int64, csize uint64) []byte {
		var buf bytes.Buffer
		fw, _ := flate.NewWriter(&buf, flate.BestCompression)
		fw.Write(make([]byte, size))
		fw.Close()
		raw := append(buf.Bytes(), make([]byte, int(csize)-buf.Len())...)
		h := zip.FileHeader{
			Name: "zeros.bin", Method: zip.Deflate,
			CRC32: crc32.ChecksumIEEE(make([]byte, size)), CompressedSize64: csize, UncompressedSize64: uint64(size),
		}
		return buildRawZip(t, rawZipFile{Header: h, Raw: raw[:csize]})
	}
	lim := pack.ArchiveLimits()
	ctx := context.Background()

	at := entry(t, 100*compressed, compressed)
	p, err := pack.ReadZip(ctx, bytes.NewReader(at), int64(len(at)), lim)
	if err != nil {
		t.Fatalf("ratio exactly 100:1 refused: %v", err)
	}
	checkPackage(t, p, lim)

	over := entry(t, 100*compressed+1, compressed)
	_, err = pack.ReadZip(ctx, bytes.NewReader(over), int64(len(over)), lim)
	assertRefused(t, err, pack.ErrCompressionRatio, skilld.ETOOLARGE)

	// Below RatioCheckMinSize a high ratio is harmless and accepted: a
	// MiB of zeros deflates about 1000:1.
	small := buildZip(t, zipFile{Name: "zeros.bin", Data: make([]byte, pack.RatioCheckMinSize), Deflate: true})
	if _, err := pack.ReadZip(ctx, bytes.NewReader(small), int64(len(small)), lim); err != nil {
		t.Fatalf("1 MiB of zeros refused: %v", err)
	}
	// Zero compressed bytes for real data is an infinite ratio.
	h := zip.FileHeader{Name: "x", Method: zip.Deflate, UncompressedSize64: pack.RatioCheckMinSize + 1}
	inf := buildRawZip(t, rawZipFile{Header: h})
	_, err = pack.ReadZip(ctx, bytes.NewReader(inf), int64(len(inf)), lim)
	assertRefused(t, err, pack.ErrCompressionRatio, skilld.ETOOLARGE)

	// MaxRatio 0 turns the check off; the size limits still apply.
	lim.MaxRatio = 0
	if _, err := pack.ReadZip(ctx, bytes.NewReader(over), int64(len(over)), lim); err != nil {
		t.Fatalf("ratio check with MaxRatio 0: %v", err)
	}
}

// TestTarGzStreamRatio: ordinary compressible content passes; a stream that
// expands beyond the ratio is stopped even when the bytes go to skipped
// entries that no per-file limit sees.
func TestTarGzStreamRatio(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	lim := pack.ArchiveLimits()
	var text bytes.Buffer
	for i := 0; text.Len() < 3<<20; i++ {
		fmt.Fprintf(&text, "line %d: the quick brown fox jumps over the lazy dog %x\n", i, i*2654435761)
	}
	ok := gzipBytes(t, buildTar(t, tarFile{Name: "doc.txt", Data: text.Bytes()}))
	if r := float64(text.Len()) / float64(len(ok)); r > 50 {
		t.Fatalf("test text compresses %.0f:1; pick less regular text", r)
	}
	p, err := pack.ReadTarGz(ctx, bytes.NewReader(ok), lim)
	if err != nil {
		t.Fatalf("ordinary text refused: %v", err)
	}
	checkPackage(t, p, lim)

	bomb := gzipBytes(t, buildTar(t,
		tarFile{Name: "__MACOSX/._pad", Data: make([]byte, 8<<20)},
		tarFile{Name: "SKILL.md", Data: []byte("hi")},
	))
	_, err = pack.ReadTarGz(ctx, bytes.NewReader(bomb), lim)
	assertRefused(t, err, pack.ErrCompressionRatio, skilld.ETOOLARGE)
}
