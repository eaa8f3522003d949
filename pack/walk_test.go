package pack_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
)

// walked is what a test records of one entry.
type walked struct {
	Path string
	Type pack.TarEntryType
	Data string
	Perm fs.FileMode
}

func walkAll(t *testing.T, archive []byte) ([]walked, error) {
	t.Helper()
	var got []walked
	err := pack.WalkTarGz(context.Background(), bytes.NewReader(archive), pack.MaxCompressionRatio, func(e pack.TarEntry) error {
		w := walked{Path: e.Path, Type: e.Type, Perm: e.Mode.Perm()}
		// Read only even-numbered files' data: the walker must skip what a
		// callback leaves unread.
		if e.Type == pack.TarFile && len(got)%2 == 0 {
			data, err := e.ReadData()
			if err != nil {
				return err
			}
			w.Data = string(data)
		}
		got = append(got, w)
		return nil
	})
	return got, err
}

func TestWalkTarGzReportsEntries(t *testing.T) {
	t.Parallel()
	archive := gzipBytes(t, append(globalHeader(t), buildTar(t,
		tarFile{Name: "./top/", Type: tar.TypeDir, Mode: 0o755},
		tarFile{Name: "top/a.txt", Data: []byte("alpha")},
		tarFile{Name: "top/run.sh", Data: []byte("#!/bin/sh\n"), Mode: 0o755},
		tarFile{Name: "top/._junk", Data: []byte("apple")},
		tarFile{Name: "top/link", Type: tar.TypeSymlink, Linkname: "a.txt"},
		tarFile{Name: "top/hard", Type: tar.TypeLink, Linkname: "top/a.txt"},
		tarFile{Name: "top/fifo", Type: tar.TypeFifo},
		tarFile{Name: "top/../odd", Data: []byte("unchecked")},
	)...))
	got, err := walkAll(t, archive)
	if err != nil {
		t.Fatal(err)
	}
	want := []walked{
		{Path: "top", Type: pack.TarDir, Perm: 0o755},
		{Path: "top/a.txt", Type: pack.TarFile, Perm: 0o644},
		{Path: "top/run.sh", Type: pack.TarFile, Data: "#!/bin/sh\n", Perm: 0o755},
		{Path: "top/link", Type: pack.TarSymlink, Perm: 0o644},
		{Path: "top/hard", Type: pack.TarHardlink, Perm: 0o644},
		{Path: "top/fifo", Type: pack.TarOther, Perm: 0o644},
		{Path: "top/../odd", Type: pack.TarFile, Data: "unchecked", Perm: 0o644},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("walked\n%+v\nwant\n%+v", got, want)
	}
}

// globalHeader is a pax global header as `git archive` writes it first,
// without the end-of-archive marker, so that a tar can follow it.
func globalHeader(t *testing.T) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	h := &tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header",
		PAXRecords: map[string]string{"comment": "0123456789abcdef0123456789abcdef01234567"}}
	if err := tw.WriteHeader(h); err != nil {
		t.Fatal(err)
	}
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestWalkTarGzUnsupported(t *testing.T) {
	t.Parallel()
	archive := gzipBytes(t, buildTar(t,
		tarFile{Name: "d/", Type: tar.TypeDir},
		tarFile{Name: "f", Data: []byte("x")},
		tarFile{Name: "s", Type: tar.TypeSymlink, Linkname: "/etc/passwd"},
		tarFile{Name: "c", Type: tar.TypeChar},
	))
	var errs []error
	err := pack.WalkTarGz(context.Background(), bytes.NewReader(archive), 0, func(e pack.TarEntry) error {
		errs = append(errs, e.Unsupported())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(errs) != 4 || errs[0] != nil || errs[1] != nil {
		t.Fatalf("Unsupported() = %v; want nil for the folder and the file", errs)
	}
	for _, err := range errs[2:] {
		assertRefused(t, err, pack.ErrUnsupportedEntry, skilld.EINVALID)
	}
}

func TestWalkTarGzStopsOnCallbackError(t *testing.T) {
	t.Parallel()
	archive := gzipBytes(t, buildTar(t, tarFile{Name: "a"}, tarFile{Name: "b"}))
	stop := errors.New("stop")
	n := 0
	err := pack.WalkTarGz(context.Background(), bytes.NewReader(archive), 0, func(pack.TarEntry) error {
		n++
		return stop
	})
	if err != stop || n != 1 {
		t.Fatalf("err %v after %d entries; want the callback's error after 1", err, n)
	}
}

func TestWalkTarGzRefusesDamage(t *testing.T) {
	t.Parallel()
	good := storedGzip(buildTar(t, tarFile{Name: "a.txt", Data: bytes.Repeat([]byte("a"), 4096)}))
	badCRC := bytes.Clone(good)
	badCRC[len(badCRC)-6] ^= 0xff
	// Cut inside the file's data: the header promises more than arrives.
	truncated := good[:len(good)-3000]
	cases := []struct {
		name     string
		data     []byte
		sentinel error
		code     string
	}{
		{"bad crc", badCRC, pack.ErrBadArchive, skilld.EINVALID},
		{"truncated", truncated, pack.ErrBadArchive, skilld.EINVALID},
		{"not gzip", []byte("plain text"), pack.ErrBadArchive, skilld.EINVALID},
		{"stream bomb", tarGzZeros(t, "zeros.bin", 200<<20), pack.ErrCompressionRatio, skilld.ETOOLARGE},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := pack.WalkTarGz(context.Background(), bytes.NewReader(c.data), pack.MaxCompressionRatio, func(e pack.TarEntry) error {
				if e.Size > 1<<20 {
					return nil // leave the bomb unread: skipping it must trip the guard too
				}
				_, err := e.ReadData()
				return err
			})
			assertRefused(t, err, c.sentinel, c.code)
		})
	}
}

func TestWalkTarGzHonoursContext(t *testing.T) {
	t.Parallel()
	archive := gzipBytes(t, buildTar(t, tarFile{Name: "a"}, tarFile{Name: "b"}))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := pack.WalkTarGz(ctx, bytes.NewReader(archive), 0, func(pack.TarEntry) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled before start: %v", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	n := 0
	err := pack.WalkTarGz(ctx, bytes.NewReader(archive), 0, func(pack.TarEntry) error {
		n++
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) || n != 1 {
		t.Fatalf("cancelled in the first callback: err %v after %d entries", err, n)
	}
}

func ExampleWalkTarGz() {
	// A tiny archive: a folder with a SKILL.md and a file.
	var tarBuf, gzBuf bytes.Buffer
	tw := tar.NewWriter(&tarBuf)
	for _, f := range []struct{ name, data string }{{"repo/SKILL.md", "---\n"}, {"repo/big.bin", "abc"}} {
		_ = tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.data)), Typeflag: tar.TypeReg})
		_, _ = tw.Write([]byte(f.data))
	}
	_ = tw.Close()
	zw := gzip.NewWriter(&gzBuf)
	_, _ = zw.Write(tarBuf.Bytes())
	_ = zw.Close()

	// Look at the headers only; data left unread is skipped.
	_ = pack.WalkTarGz(context.Background(), &gzBuf, pack.MaxCompressionRatio, func(e pack.TarEntry) error {
		fmt.Println(e.Path, e.Size)
		return nil
	})
	// Output:
	// repo/SKILL.md 4
	// repo/big.bin 3
}
