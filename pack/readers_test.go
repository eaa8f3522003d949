package pack_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
)

func paths(p *pack.Package) []string {
	var out []string
	for _, f := range p.Files() {
		out = append(out, f.Path)
	}
	return out
}

func readZipBytes(t *testing.T, b []byte) (*pack.Package, error) {
	return pack.ReadZip(context.Background(), bytes.NewReader(b), int64(len(b)), pack.ArchiveLimits())
}

func TestReadZipSkipsAndStrips(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		files []zipFile
		want  []string
		top   string
	}{
		{
			name: "macOS archive of a folder",
			files: []zipFile{
				{Name: "my-skill/", Mode: fs.ModeDir | 0o755},
				{Name: "my-skill/SKILL.md", Data: []byte("a")},
				{Name: "my-skill/.gitignore", Data: []byte("b")},
				{Name: "my-skill/scripts/", Mode: fs.ModeDir | 0o755},
				{Name: "my-skill/scripts/._run.sh", Data: []byte("apple")},
				{Name: "my-skill/scripts/run.sh", Data: []byte("c")},
				{Name: "__MACOSX/", Mode: fs.ModeDir | 0o755},
				{Name: "__MACOSX/my-skill/._SKILL.md", Data: []byte("apple")},
			},
			want: []string{".gitignore", "SKILL.md", "scripts/run.sh"},
			top:  "my-skill",
		},
		{
			name:  "single file in a folder",
			files: []zipFile{{Name: "x/SKILL.md", Data: []byte("a")}},
			want:  []string{"SKILL.md"},
			top:   "x",
		},
		{
			name:  "file at the top level",
			files: []zipFile{{Name: "x/a.md", Data: []byte("a")}, {Name: "SKILL.md", Data: []byte("b")}},
			want:  []string{"SKILL.md", "x/a.md"},
		},
		{
			name:  "two top folders",
			files: []zipFile{{Name: "x/a.md", Data: []byte("a")}, {Name: "y/b.md", Data: []byte("b")}},
			want:  []string{"x/a.md", "y/b.md"},
		},
		{
			name:  "top folder prefix of another",
			files: []zipFile{{Name: "x/a.md", Data: []byte("a")}, {Name: "xy/b.md", Data: []byte("b")}},
			want:  []string{"x/a.md", "xy/b.md"},
		},
		{
			name:  "only a folder entry elsewhere",
			files: []zipFile{{Name: "empty/", Mode: fs.ModeDir | 0o755}, {Name: "x/SKILL.md", Data: []byte("a")}},
			want:  []string{"SKILL.md"},
			top:   "x",
		},
		{
			name:  "leading ./",
			files: []zipFile{{Name: "./", Mode: fs.ModeDir | 0o755}, {Name: "./SKILL.md", Data: []byte("a")}, {Name: "./a/b", Data: []byte("b")}},
			want:  []string{"SKILL.md", "a/b"},
		},
		{
			name:  "AppleDouble and __MACOSX only",
			files: []zipFile{{Name: "._x", Data: []byte("a")}, {Name: "__MACOSX/y", Data: []byte("b")}},
		},
		{
			name:  "nested __MACOSX is kept",
			files: []zipFile{{Name: "SKILL.md", Data: []byte("a")}, {Name: "a/__MACOSX/y", Data: []byte("b")}},
			want:  []string{"SKILL.md", "a/__MACOSX/y"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p, err := readZipBytes(t, buildZip(t, c.files...))
			if err != nil {
				t.Fatal(err)
			}
			checkPackage(t, p, pack.ArchiveLimits())
			if got := paths(p); !slices.Equal(got, c.want) {
				t.Errorf("paths %q, want %q", got, c.want)
			}
			if p.TopDir() != c.top {
				t.Errorf("TopDir %q, want %q", p.TopDir(), c.top)
			}
		})
	}
}

func TestExecBits(t *testing.T) {
	t.Parallel()
	modes := map[string]struct {
		mode fs.FileMode
		exec bool
	}{
		"a": {0o644, false}, "b": {0o755, true}, "c": {0o744, true},
		"d": {0o610, true}, "e": {0o601, true}, "f": {0o600, false},
	}
	var zs []zipFile
	var ts []tarFile
	for name, m := range modes {
		zs = append(zs, zipFile{Name: name, Data: []byte(name), Mode: m.mode})
		ts = append(ts, tarFile{Name: name, Data: []byte(name), Mode: int64(m.mode)})
	}
	zp, err := readZipBytes(t, buildZip(t, zs...))
	if err != nil {
		t.Fatal(err)
	}
	tp, err := pack.ReadTar(context.Background(), bytes.NewReader(buildTar(t, ts...)), pack.ArchiveLimits())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*pack.Package{zp, tp} {
		for name, m := range modes {
			if f, ok := p.File(name); !ok || f.Exec != m.exec {
				t.Errorf("%s (mode %o): exec %v, want %v", name, m.mode, f.Exec, m.exec)
			}
		}
	}
	if zp.Digest() != tp.Digest() {
		t.Errorf("zip and tar digests differ")
	}

	// A zip made on Windows has no Unix mode: nothing is executable.
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	h := &zip.FileHeader{Name: "run.bat", Method: zip.Store, CreatorVersion: 0<<8 | 20, ExternalAttrs: 0x20}
	w, _ := zw.CreateHeader(h)
	w.Write([]byte("echo hi"))
	zw.Close()
	p, err := readZipBytes(t, buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := p.File("run.bat"); f.Exec {
		t.Errorf("MS-DOS zip entry marked executable")
	}
}

func TestReadZipUnsupportedMethod(t *testing.T) {
	t.Parallel()
	data := []byte("BZh9 pretend")
	b := buildRawZip(t, rawZipFile{Header: zip.FileHeader{Name: "a", Method: 12, CompressedSize64: uint64(len(data)), UncompressedSize64: 20}, Raw: data})
	_, err := readZipBytes(t, b)
	assertRefused(t, err, pack.ErrBadArchive, skilld.EINVALID)
}

func TestReadTarFeatures(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	// What `git archive --prefix=repo-abc/` writes first.
	must(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header",
		PAXRecords: map[string]string{"comment": "0123456789abcdef0123456789abcdef01234567"}}))
	must(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "./", Mode: 0o755}))
	must(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: ".", Mode: 0o755}))
	must(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "./repo-abc/", Mode: 0o755}))
	for _, f := range []tarFile{
		{Name: "repo-abc/SKILL.md", Data: []byte("skill")},
		{Name: "repo-abc/scripts/run.sh", Data: []byte("#!/bin/sh"), Mode: 0o755},
		{Name: "repo-abc/" + string(bytes.Repeat([]byte("long/"), 30)) + "name.md", Data: []byte("pax path")},
		{Name: "repo-abc/._junk", Data: []byte("apple")},
	} {
		mode := f.Mode
		if mode == 0 {
			mode = 0o644
		}
		must(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f.Name, Mode: mode, Size: int64(len(f.Data))}))
		_, err := tw.Write(f.Data)
		must(t, err)
	}
	must(t, tw.Close())

	for name, read := range map[string]func() (*pack.Package, error){
		"tar": func() (*pack.Package, error) {
			return pack.ReadTar(context.Background(), bytes.NewReader(buf.Bytes()), pack.ArchiveLimits())
		},
		"tar.gz": func() (*pack.Package, error) {
			return pack.ReadTarGz(context.Background(), bytes.NewReader(gzipBytes(t, buf.Bytes())), pack.ArchiveLimits())
		},
	} {
		p, err := read()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checkPackage(t, p, pack.ArchiveLimits())
		if p.TopDir() != "repo-abc" || p.Len() != 3 {
			t.Fatalf("%s: TopDir %q, paths %q", name, p.TopDir(), paths(p))
		}
		if f, ok := p.File("scripts/run.sh"); !ok || !f.Exec {
			t.Fatalf("%s: scripts/run.sh missing or not executable", name)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestReadArchiveSniffing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tarBytes := tarOf(t, sampleFiles())
	want := mustNew(t, sampleFiles(), pack.ArchiveLimits()).Digest()
	for name, b := range map[string][]byte{
		"zip":          validZip(t, true),
		"tar":          tarBytes,
		"tar.gz":       gzipBytes(t, tarBytes),
		"stored gzip":  storedGzip(tarBytes),
		"stored zip":   validZip(t, false),
		"gnu tar":      gnuTar(t),
		"prefixed tar": tarOf(t, validArchiveFiles()),
	} {
		p, err := pack.ReadArchive(ctx, bytes.NewReader(b), int64(len(b)), pack.ArchiveLimits())
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		checkPackage(t, p, pack.ArchiveLimits())
		if name != "gnu tar" && p.Digest() != want {
			t.Errorf("%s: digest %s, want %s", name, p.Digest(), want)
		}
	}
	// An empty zip is a valid, empty archive.
	var empty bytes.Buffer
	zip.NewWriter(&empty).Close()
	if p, err := pack.ReadArchive(ctx, bytes.NewReader(empty.Bytes()), int64(empty.Len()), pack.ArchiveLimits()); err != nil || p.Len() != 0 {
		t.Errorf("empty zip: %v", err)
	}
	for name, b := range map[string][]byte{
		"empty":   nil,
		"text":    []byte("hello"),
		"7z":      []byte("7z\xbc\xaf\x27\x1c\x00\x04"),
		"rar":     []byte("Rar!\x1a\x07\x01\x00"),
		"bzip2":   []byte("BZh91AY&SY"),
		"zstd":    []byte("\x28\xb5\x2f\xfd"),
		"xz":      []byte("\xfd7zXZ\x00"),
		"PK junk": []byte("PK\x01\x02"),
	} {
		_, err := pack.ReadArchive(ctx, bytes.NewReader(b), int64(len(b)), pack.ArchiveLimits())
		assertRefusedNamed(t, name, err, pack.ErrBadArchive, skilld.EINVALID)
		if err != nil && !bytes.Contains([]byte(err.Error()), []byte("unsupported archive format")) {
			t.Errorf("%s: message %q", name, err)
		}
	}
}

func gnuTar(t *testing.T) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	must(t, tw.WriteHeader(&tar.Header{Name: "SKILL.md", Mode: 0o644, Size: 2, Format: tar.FormatGNU}))
	_, err := tw.Write([]byte("hi"))
	must(t, err)
	must(t, tw.Close())
	return buf.Bytes()
}

func TestReadersHonourCancelledContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	z := validZip(t, true)
	tb := validTar(t)
	dir := t.TempDir()
	writeTree(t, dir, sampleFiles())
	for name, err := range map[string]error{
		"zip":     second(pack.ReadZip(ctx, bytes.NewReader(z), int64(len(z)), pack.ArchiveLimits())),
		"tar":     second(pack.ReadTar(ctx, bytes.NewReader(tb), pack.ArchiveLimits())),
		"tar.gz":  second(pack.ReadTarGz(ctx, bytes.NewReader(gzipBytes(t, tb)), pack.ArchiveLimits())),
		"archive": second(pack.ReadArchive(ctx, bytes.NewReader(z), int64(len(z)), pack.ArchiveLimits())),
		"dir":     second(pack.ReadDir(ctx, dir, pack.ArchiveLimits())),
	} {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %v, want context.Canceled", name, err)
		}
	}
}

func second(_ *pack.Package, err error) error { return err }

func TestReadDir(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	lim := pack.ArchiveLimits()

	t.Run("skips and keeps", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		writeTree(t, dir, []pack.File{
			{Path: "x/SKILL.md", Data: []byte("a")},
			{Path: "x/._SKILL.md", Data: []byte("apple")},
			{Path: "__MACOSX/x/._SKILL.md", Data: []byte("apple")},
			{Path: "sub/__MACOSX/kept", Data: []byte("b")},
			{Path: ".hidden/.env.example", Data: []byte("c")},
		})
		must(t, os.MkdirAll(filepath.Join(dir, "empty", "dirs"), 0o755))
		p, err := pack.ReadDir(ctx, dir, lim)
		if err != nil {
			t.Fatal(err)
		}
		checkPackage(t, p, lim)
		want := []string{".hidden/.env.example", "sub/__MACOSX/kept", "x/SKILL.md"}
		if got := paths(p); !slices.Equal(got, want) || p.TopDir() != "" {
			t.Fatalf("paths %q TopDir %q, want %q and no TopDir", got, p.TopDir(), want)
		}
	})

	t.Run("no top folder stripping", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		writeTree(t, dir, []pack.File{{Path: "x/SKILL.md", Data: []byte("a")}})
		p, err := pack.ReadDir(ctx, dir, lim)
		if err != nil {
			t.Fatal(err)
		}
		if got := paths(p); !slices.Equal(got, []string{"x/SKILL.md"}) || p.TopDir() != "" {
			t.Fatalf("paths %q TopDir %q", got, p.TopDir())
		}
	})

	t.Run("root is a symlink to a directory", func(t *testing.T) {
		t.Parallel()
		base := t.TempDir()
		real := filepath.Join(base, "real")
		writeTree(t, real, sampleFiles())
		link := filepath.Join(base, "link")
		must(t, os.Symlink(real, link))
		p, err := pack.ReadDir(ctx, link, lim)
		if err != nil {
			t.Fatal(err)
		}
		if p.Digest() != mustNew(t, sampleFiles(), lim).Digest() {
			t.Fatal("digest differs through a symlinked root")
		}
	})

	refused := map[string]struct {
		setup    func(t *testing.T, dir string)
		sentinel error
	}{
		"symlink to file inside": {func(t *testing.T, dir string) {
			must(t, os.Symlink("SKILL.md", filepath.Join(dir, "link.md")))
		}, pack.ErrUnsupportedEntry},
		"symlink to file outside": {func(t *testing.T, dir string) {
			must(t, os.Symlink("/etc/passwd", filepath.Join(dir, "passwd")))
		}, pack.ErrUnsupportedEntry},
		"symlink to directory": {func(t *testing.T, dir string) {
			must(t, os.Symlink("/etc", filepath.Join(dir, "etc")))
		}, pack.ErrUnsupportedEntry},
		"dangling symlink": {func(t *testing.T, dir string) {
			must(t, os.Symlink("nowhere", filepath.Join(dir, "sub", "dangling")))
		}, pack.ErrUnsupportedEntry},
		"fifo": {func(t *testing.T, dir string) {
			must(t, syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644))
		}, pack.ErrUnsupportedEntry},
		"socket": {func(t *testing.T, dir string) {
			// Unix socket paths are limited to ~100 bytes; listen from
			// inside dir with a relative name.
			l, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(dir, "s"), Net: "unix"})
			if err != nil {
				t.Skipf("cannot create a socket: %v", err)
			}
			l.SetUnlinkOnClose(false)
			t.Cleanup(func() { l.Close() })
		}, pack.ErrUnsupportedEntry},
		"backslash name": {func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, `a\b`), nil, 0o644))
		}, pack.ErrUnsafePath},
		"control char name": {func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "a\nb"), nil, 0o644))
		}, pack.ErrUnsafePath},
		"case collision": {func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "skill.md"), nil, 0o644))
		}, pack.ErrPathCollision},
	}
	for name, c := range refused {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeTree(t, dir, []pack.File{{Path: "SKILL.md", Data: []byte("x")}, {Path: "sub/a.md"}})
			c.setup(t, dir)
			_, err := pack.ReadDir(ctx, dir, lim)
			assertRefused(t, err, c.sentinel, skilld.EINVALID)
			t.Log(err)
		})
	}

	t.Run("missing root", func(t *testing.T) {
		t.Parallel()
		_, err := pack.ReadDir(ctx, filepath.Join(t.TempDir(), "nope"), lim)
		if skilld.ErrorCode(err) != skilld.ENOTFOUND {
			t.Fatalf("%v: code %q, want %q", err, skilld.ErrorCode(err), skilld.ENOTFOUND)
		}
	})
	t.Run("root is a file", func(t *testing.T) {
		t.Parallel()
		f := filepath.Join(t.TempDir(), "f")
		must(t, os.WriteFile(f, nil, 0o644))
		_, err := pack.ReadDir(ctx, f, lim)
		if skilld.ErrorCode(err) != skilld.EINVALID {
			t.Fatalf("%v: code %q, want %q", err, skilld.ErrorCode(err), skilld.EINVALID)
		}
	})
}

func TestReadTarGzChecksIntegrity(t *testing.T) {
	t.Parallel()
	good := storedGzip(validTar(t))
	if _, err := pack.ReadTarGz(context.Background(), bytes.NewReader(good), pack.ArchiveLimits()); err != nil {
		t.Fatal(err)
	}
	// Flip a byte in the CRC trailer: the tar part decodes fine, only
	// reading the gzip stream to its end notices.
	bad := bytes.Clone(good)
	bad[len(bad)-6] ^= 0xff
	_, err := pack.ReadTarGz(context.Background(), bytes.NewReader(bad), pack.ArchiveLimits())
	assertRefused(t, err, pack.ErrBadArchive, skilld.EINVALID)
}

// TestArchivesFromSystemTools reads archives made by the usual command-line
// tools from a real directory and expects ReadDir's digest: `tar -C dir .`
// (leading "./" names), `tar` of the folder itself (a top folder), `zip -r`
// and `git archive` (a pax global header). Tools that are missing are
// skipped.
func TestArchivesFromSystemTools(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	dir := filepath.Join(base, "my-skill")
	writeTree(t, dir, sampleFiles())
	want, err := pack.ReadDir(context.Background(), dir, pack.ArchiveLimits())
	if err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, name string, args ...string) {
		t.Helper()
		if _, err := exec.LookPath(name); err != nil {
			t.Skipf("%s not installed", name)
		}
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %q: %v\n%s", name, args, err, out)
		}
	}
	cases := []struct {
		tool string
		make func(t *testing.T, out string)
		top  string
	}{
		{"tar", func(t *testing.T, out string) { run(t, "tar", "-C", dir, "-cf", out, ".") }, ""},
		{"tar", func(t *testing.T, out string) { run(t, "tar", "-C", base, "-czf", out, "my-skill") }, "my-skill"},
		{"zip", func(t *testing.T, out string) { run(t, "zip", "-qrX", out, ".") }, ""},
		{"git", func(t *testing.T, out string) {
			run(t, "git", "init", "-q")
			run(t, "git", "add", "-A")
			run(t, "git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "x")
			run(t, "git", "archive", "--format=tar", "--prefix=owner-repo-abc123/", "-o", out, "HEAD")
			// Leave the tree as ReadDir saw it.
			must(t, os.RemoveAll(filepath.Join(dir, ".git")))
		}, "owner-repo-abc123"},
	}
	for i, c := range cases {
		t.Run(fmt.Sprintf("%d-%s", i, c.tool), func(t *testing.T) {
			out := filepath.Join(base, fmt.Sprintf("out%d.%s", i, c.tool))
			c.make(t, out)
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			p, err := pack.ReadArchive(context.Background(), bytes.NewReader(b), int64(len(b)), pack.ArchiveLimits())
			if err != nil {
				t.Fatal(err)
			}
			if p.Digest() != want.Digest() || p.TopDir() != c.top {
				t.Fatalf("digest %s TopDir %q, want %s %q\n%s\nwant:\n%s", p.Digest(), p.TopDir(), want.Digest(), c.top, p.Manifest(), want.Manifest())
			}
		})
	}
}
