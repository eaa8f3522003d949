package pack_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/unicode/norm"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
)

var update = flag.Bool("update", false, "rewrite testdata/hostile and the generated fuzz seeds from their generators")

// hostileCase is one hostile archive and how it must be refused.
type hostileCase struct {
	file     string // name under testdata/hostile
	data     []byte
	sentinel error
	code     string
}

var skillMD = zipFile{Name: "SKILL.md", Data: []byte("---\nname: hostile\ndescription: x\n---\n")}

// hostileCorpus generates the committed hostile archives. Zip entries are
// stored and deflate data is written by hand, so the bytes depend only on
// the archive formats, not on compress/flate, and do not change between Go
// releases.
func hostileCorpus(t testing.TB) []hostileCase {
	inv, tl := skilld.EINVALID, skilld.ETOOLARGE
	evil := []byte("#!/bin/sh\nrm -rf \"$HOME\"\n")
	tarSkill := tarFile{Name: "SKILL.md", Data: skillMD.Data}

	deep := strings.Repeat("d/", 49) + "f.md"
	lyingData := bytes.Repeat([]byte("A"), 2048)
	encryptedRaw := append(make([]byte, 12), evil...) // 12-byte ZipCrypto header, then "ciphertext"

	return []hostileCase{
		{"zip-slip.zip", buildZip(t, skillMD, zipFile{Name: "../../evil.sh", Data: evil, Mode: 0o755}), pack.ErrUnsafePath, inv},
		{"absolute-path.zip", buildZip(t, skillMD, zipFile{Name: "/etc/passwd", Data: evil}), pack.ErrUnsafePath, inv},
		{"drive-letter.zip", buildZip(t, skillMD, zipFile{Name: "C:/Windows/evil.dll", Data: evil}), pack.ErrUnsafePath, inv},
		{"backslash-path.zip", buildZip(t, skillMD, zipFile{Name: `..\..\evil.bat`, Data: evil}), pack.ErrUnsafePath, inv},
		{"slip-folder.zip", buildZip(t, skillMD, zipFile{Name: "../", Mode: fs.ModeDir | 0o755}), pack.ErrUnsafePath, inv},
		{"symlink.zip", buildZip(t, skillMD, zipFile{Name: "passwd", Data: []byte("../../../../etc/passwd"), Mode: fs.ModeSymlink | 0o777}), pack.ErrUnsupportedEntry, inv},
		{"chardev.zip", buildZip(t, skillMD, zipFile{Name: "null", Mode: fs.ModeDevice | fs.ModeCharDevice | 0o666}), pack.ErrUnsupportedEntry, inv},
		{"socket.zip", buildZip(t, skillMD, zipFile{Name: "sock", Mode: fs.ModeSocket | 0o666}), pack.ErrUnsupportedEntry, inv},
		{"duplicate.zip", buildZip(t, skillMD, zipFile{Name: "SKILL.md", Data: []byte("second")}), pack.ErrPathCollision, inv},
		{"case-collision.zip", buildZip(t, skillMD, zipFile{Name: "README.md", Data: []byte("a")}, zipFile{Name: "Readme.md", Data: []byte("b")}), pack.ErrPathCollision, inv},
		{"nfc-nfd.zip", buildZip(t, skillMD, zipFile{Name: norm.NFC.String("café.md"), Data: []byte("a")}, zipFile{Name: norm.NFD.String("café.md"), Data: []byte("b")}), pack.ErrPathCollision, inv},
		{"file-and-folder.zip", buildZip(t, skillMD, zipFile{Name: "docs", Data: []byte("a")}, zipFile{Name: "Docs/x.md", Data: []byte("b")}), pack.ErrPathCollision, inv},
		{"invalid-utf8.zip", buildZip(t, skillMD, zipFile{Name: "\xff\xfe.md", Data: []byte("x")}), pack.ErrUnsafePath, inv},
		{"deep-nesting.zip", buildZip(t, skillMD, zipFile{Name: deep, Data: []byte("deep")}), pack.ErrUnsafePath, inv},
		{"nul-name.zip", buildZip(t, skillMD, zipFile{Name: "run.sh\x00.txt", Data: evil}), pack.ErrUnsafePath, inv},
		{"control-char.zip", buildZip(t, skillMD, zipFile{Name: "a\u0085b.md", Data: evil}), pack.ErrUnsafePath, inv},
		{"encrypted.zip", buildRawZip(t,
			rawZipFile{Header: zip.FileHeader{Name: "SKILL.md", Method: zip.Store, CRC32: crc32.ChecksumIEEE(skillMD.Data),
				CompressedSize64: uint64(len(skillMD.Data)), UncompressedSize64: uint64(len(skillMD.Data))}, Raw: skillMD.Data},
			rawZipFile{Header: zip.FileHeader{Name: "secret.sh", Method: zip.Store, Flags: 0x1, CRC32: crc32.ChecksumIEEE(evil),
				CompressedSize64: uint64(len(encryptedRaw)), UncompressedSize64: uint64(len(evil))}, Raw: encryptedRaw},
		), pack.ErrUnsupportedEntry, inv},
		// Declares 1 KiB; its (hand-written, stored-block) deflate data
		// inflates to 2 KiB.
		{"lying-header.zip", buildRawZip(t, rawZipFile{
			Header: zip.FileHeader{Name: "big.txt", Method: zip.Deflate, CRC32: crc32.ChecksumIEEE(lyingData[:1024]),
				CompressedSize64: uint64(len(storedDeflate(lyingData))), UncompressedSize64: 1024},
			Raw: storedDeflate(lyingData),
		}), pack.ErrBadArchive, inv},
		// Central directory claims 1 KiB compressed expanding to 1 GiB;
		// the file is tiny because the data is never there.
		{"ratio-bomb.zip", buildRawZip(t, rawZipFile{
			Header: zip.FileHeader{Name: "bomb.bin", Method: zip.Deflate, CRC32: 0xdeadbeef,
				CompressedSize64: 1024, UncompressedSize64: 1 << 30},
			Raw: make([]byte, 1024),
		}), pack.ErrCompressionRatio, tl},
		{"truncated.zip", buildZip(t, skillMD, zipFile{Name: "a.txt", Data: bytes.Repeat([]byte("abc"), 300)})[:700], pack.ErrBadArchive, inv},
		{"bad-crc.zip", corruptStored(buildZip(t, skillMD)), pack.ErrBadArchive, inv},

		{"tar-slip.tar", buildTar(t, tarSkill, tarFile{Name: "../../evil.sh", Data: evil, Mode: 0o755}), pack.ErrUnsafePath, inv},
		{"absolute-path.tar", buildTar(t, tarSkill, tarFile{Name: "/etc/cron.d/evil", Data: evil}), pack.ErrUnsafePath, inv},
		{"symlink.tar", buildTar(t, tarSkill, tarFile{Name: "passwd", Type: tar.TypeSymlink, Linkname: "/etc/passwd", Mode: 0o777}), pack.ErrUnsupportedEntry, inv},
		{"symlink-then-write.tar", buildTar(t, tarSkill,
			tarFile{Name: "out", Type: tar.TypeSymlink, Linkname: "/tmp", Mode: 0o777},
			tarFile{Name: "out/evil.sh", Data: evil}), pack.ErrUnsupportedEntry, inv},
		{"hardlink.tar", buildTar(t, tarSkill, tarFile{Name: "shadow", Type: tar.TypeLink, Linkname: "/etc/shadow"}), pack.ErrUnsupportedEntry, inv},
		{"chardev.tar", buildTar(t, tarSkill, tarFile{Name: "null", Type: tar.TypeChar, Mode: 0o666}), pack.ErrUnsupportedEntry, inv},
		{"blockdev.tar", buildTar(t, tarSkill, tarFile{Name: "sda", Type: tar.TypeBlock, Mode: 0o660}), pack.ErrUnsupportedEntry, inv},
		{"fifo.tar", buildTar(t, tarSkill, tarFile{Name: "pipe", Type: tar.TypeFifo, Mode: 0o644}), pack.ErrUnsupportedEntry, inv},
		{"unknown-type.tar", buildTar(t, tarSkill, tarFile{Name: "odd", Type: 'Z', Data: []byte("?")}), pack.ErrUnsupportedEntry, inv},
		{"duplicate.tar", buildTar(t, tarSkill, tarFile{Name: "SKILL.md", Data: []byte("replaced")}), pack.ErrPathCollision, inv},
		{"control-char.tar", buildTar(t, tarSkill, tarFile{Name: "\x1b[2J.md", Data: []byte("x")}), pack.ErrUnsafePath, inv},
		{"truncated.tar", buildTar(t, tarSkill, tarFile{Name: "a.bin", Data: make([]byte, 4096)})[:512*4], pack.ErrBadArchive, inv},
		{"not-an-archive.txt", []byte("this is not an archive\n"), pack.ErrBadArchive, inv},
	}
}

// corruptStored flips a byte of the first stored entry's data.
func corruptStored(b []byte) []byte {
	b = slices.Clone(b)
	i := bytes.Index(b, skillMD.Data)
	b[i] ^= 0x20
	return b
}

// readHostile reads data the way the file name says, and through ReadArchive,
// and returns both errors.
func readHostile(ctx context.Context, name string, data []byte, lim pack.Limits) []error {
	var errs []error
	r := bytes.NewReader(data)
	_, err := pack.ReadArchive(ctx, r, int64(len(data)), lim)
	errs = append(errs, err)
	switch filepath.Ext(name) {
	case ".zip":
		_, err = pack.ReadZip(ctx, r, int64(len(data)), lim)
		errs = append(errs, err)
	case ".tar":
		_, err = pack.ReadTar(ctx, bytes.NewReader(data), lim)
		errs = append(errs, err)
	}
	return errs
}

// TestHostileCorpus checks that the committed corpus is what the generator
// produces (run with -update to rewrite it) and that every archive in it is
// refused with the right sentinel and code, without any reader writing a
// file: TMPDIR and the working directory point at empty folders that must
// stay empty.
func TestHostileCorpus(t *testing.T) {
	cases := hostileCorpus(t)
	dir := filepath.Join("testdata", "hostile")
	generated := map[string][]byte{}
	for _, c := range cases {
		generated[filepath.Join(dir, c.file)] = c.data
	}
	for name, data := range fuzzSeeds(t, cases) {
		generated[name] = data
	}
	if *update {
		for name, data := range generated {
			if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(name, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	committedData := map[string][]byte{}
	for name, data := range generated {
		got, err := os.ReadFile(name)
		committedData[name] = got
		if err != nil {
			t.Fatalf("%v (run go test ./pack -run TestHostileCorpus -update)", err)
		}
		if !bytes.Equal(got, data) {
			t.Errorf("%s differs from its generator (run go test ./pack -run TestHostileCorpus -update)", name)
		}
	}
	committed, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range committed {
		if _, ok := generated[filepath.Join(dir, e.Name())]; !ok {
			t.Errorf("%s/%s is not produced by the generator; delete it or add a case", dir, e.Name())
		}
	}

	// From here on the working directory is an empty temp folder; the
	// committed files were read above.
	tmp, cwd := noWrites(t)
	ctx := context.Background()
	for _, c := range cases {
		data := committedData[filepath.Join(dir, c.file)]
		for i, err := range readHostile(ctx, c.file, data, pack.ArchiveLimits()) {
			t.Run(fmt.Sprintf("%s/%d", c.file, i), func(t *testing.T) {
				assertRefused(t, err, c.sentinel, c.code)
				t.Logf("%v", err)
			})
		}
		assertEmpty(t, tmp, cwd)
	}
}

// noWrites points TMPDIR and the working directory at fresh empty folders.
// It must be called before anything else in the test creates temp dirs.
func noWrites(t *testing.T) (tmp, cwd string) {
	tmp, cwd = t.TempDir(), t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Chdir(cwd)
	return tmp, cwd
}

func assertEmpty(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		entries, err := os.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) > 0 {
			t.Fatalf("reader wrote %d entries into %s, first %q", len(entries), d, entries[0].Name())
		}
	}
}

// TestHostileGenerated covers the hostile archives too big to commit. They
// are built in memory in well under a second.
func TestHostileGenerated(t *testing.T) {
	lim := pack.ArchiveLimits()
	start := time.Now()

	// A real deflate bomb: 1 GiB of zeros in about 1 MB, honest headers.
	bombData := zeroDeflate(t, 1024, false)
	bombHeader := zip.FileHeader{Name: "zeros.bin", Method: zip.Deflate, CRC32: crcZeros(1 << 30),
		CompressedSize64: uint64(len(bombData)), UncompressedSize64: 1 << 30}
	bomb := buildRawZip(t, rawZipFile{Header: bombHeader, Raw: bombData})
	// The same bomb with a header that claims a harmless 1 KiB.
	lying := bombHeader
	lying.UncompressedSize64 = 1024
	lyingBomb := buildRawZip(t, rawZipFile{Header: lying, Raw: bombData})
	// ... and one that claims a ratio of 1 (as many bytes out as in).
	lying1 := bombHeader
	lying1.UncompressedSize64 = uint64(len(bombData))
	lyingBomb1 := buildRawZip(t, rawZipFile{Header: lying1, Raw: bombData})

	// 100,000 empty entries.
	var many bytes.Buffer
	zw := zip.NewWriter(&many)
	for i := range 100000 {
		if _, err := zw.CreateHeader(&zip.FileHeader{Name: "f" + strconv.Itoa(i), Method: zip.Store}); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}

	// A tar.gz whose 1 GiB of zeros sits in an entry that is skipped, so no
	// per-file or total limit sees it; only the stream ratio guard does.
	streamBomb := tarGzZeros(t, "__MACOSX/._pad", 1<<30)
	// A tar.gz declaring a 1 GiB file: refused from the header alone.
	bigHeader := tarGzZeros(t, "big.bin", 1<<30)

	if d := time.Since(start); d > 3*time.Second {
		t.Logf("generating the bombs took %v", d)
	}
	t.Logf("deflate bomb %d bytes, 100k-entry zip %d bytes, tar.gz stream bomb %d bytes",
		len(bomb), many.Len(), len(streamBomb))

	noRatio := lim
	noRatio.MaxRatio = 0
	cases := []struct {
		name     string
		data     []byte
		lim      pack.Limits
		sentinel error
		code     string
	}{
		{"deflate-bomb.zip", bomb, lim, pack.ErrCompressionRatio, skilld.ETOOLARGE},
		{"deflate-bomb-no-ratio.zip", bomb, noRatio, pack.ErrFileTooLarge, skilld.ETOOLARGE},
		{"deflate-bomb-lying-1k.zip", lyingBomb, lim, pack.ErrBadArchive, skilld.EINVALID},
		{"deflate-bomb-lying-ratio-1.zip", lyingBomb1, lim, pack.ErrBadArchive, skilld.EINVALID},
		{"100k-entries.zip", many.Bytes(), lim, pack.ErrTooManyFiles, skilld.ETOOLARGE},
		{"stream-bomb.tar.gz", streamBomb, lim, pack.ErrCompressionRatio, skilld.ETOOLARGE},
		{"declared-1g.tar.gz", bigHeader, lim, pack.ErrFileTooLarge, skilld.ETOOLARGE},
		{"declared-1g-no-ratio.tar.gz", bigHeader, noRatio, pack.ErrFileTooLarge, skilld.ETOOLARGE},
	}

	tmp, cwd := noWrites(t)
	ctx := context.Background()
	for _, c := range cases {
		start := time.Now()
		errs := readHostile(ctx, c.name, c.data, c.lim)
		if strings.HasSuffix(c.name, ".tar.gz") {
			_, err := pack.ReadTarGz(ctx, bytes.NewReader(c.data), c.lim)
			errs = append(errs, err)
		}
		took := time.Since(start)
		for i, err := range errs {
			t.Run(fmt.Sprintf("%s/%d", c.name, i), func(t *testing.T) {
				assertRefused(t, err, c.sentinel, c.code)
				t.Logf("%v", err)
			})
		}
		t.Logf("%s: %d reads refused in %v", c.name, len(errs), took)
		assertEmpty(t, tmp, cwd)
	}
}

// tarGzZeros is a tar.gz holding one entry of size zero bytes, built without
// compressing them: a tar header in a stored deflate block followed by
// repeated compressed zero chunks (see zeroDeflate). The stream ends after
// the data with no tar end marker, which readers never reach.
func tarGzZeros(tb testing.TB, name string, size int64) []byte {
	var hdr bytes.Buffer
	tw := tar.NewWriter(&hdr)
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: size, Typeflag: tar.TypeReg}); err != nil {
		tb.Fatal(err)
	}
	h := hdr.Bytes() // no Close: the data has not been written
	out := []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}
	out = append(out, 0) // stored block, not final
	out = binary.LittleEndian.AppendUint16(out, uint16(len(h)))
	out = binary.LittleEndian.AppendUint16(out, ^uint16(len(h)))
	out = append(out, h...)
	out = append(out, zeroDeflate(tb, int(size>>20), false)...)
	// The gzip trailer's CRC is left zero: readers must stop long before
	// they could check it.
	out = binary.LittleEndian.AppendUint32(out, 0)
	return binary.LittleEndian.AppendUint32(out, uint32(int64(len(h))+size))
}
