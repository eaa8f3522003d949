package pack_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
)

// TestDigestSameAcrossSources reads the same files from every kind of source
// and in different orders and expects one digest.
func TestDigestSameAcrossSources(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	lim := pack.ArchiveLimits()
	files := sampleFiles()
	want := mustNew(t, files, lim).Digest()

	reversed := slices.Clone(files)
	slices.Reverse(reversed)

	var zipped []zipFile
	var tfs []tarFile
	for _, f := range reversed {
		mode := int64(0o644)
		if f.Exec {
			mode = 0o755
		}
		zipped = append(zipped, zipFile{Name: "top/" + f.Path, Data: f.Data, Mode: os.FileMode(mode), Deflate: true})
		tfs = append(tfs, tarFile{Name: "./" + f.Path, Data: f.Data, Mode: mode})
	}
	zipBytes := buildZip(t, zipped...)
	tarBytes := buildTar(t, tfs...)
	tgzBytes := gzipBytes(t, tarBytes)
	dir := t.TempDir()
	writeTree(t, dir, files)

	read := map[string]func() (*pack.Package, error){
		"reversed": func() (*pack.Package, error) { return pack.New(reversed, lim) },
		"dir":      func() (*pack.Package, error) { return pack.ReadDir(ctx, dir, lim) },
		"zip": func() (*pack.Package, error) {
			return pack.ReadZip(ctx, bytes.NewReader(zipBytes), int64(len(zipBytes)), lim)
		},
		"tar":    func() (*pack.Package, error) { return pack.ReadTar(ctx, bytes.NewReader(tarBytes), lim) },
		"tar.gz": func() (*pack.Package, error) { return pack.ReadTarGz(ctx, bytes.NewReader(tgzBytes), lim) },
		"archive(zip)": func() (*pack.Package, error) {
			return pack.ReadArchive(ctx, bytes.NewReader(zipBytes), int64(len(zipBytes)), lim)
		},
		"archive(tar)": func() (*pack.Package, error) {
			return pack.ReadArchive(ctx, bytes.NewReader(tarBytes), int64(len(tarBytes)), lim)
		},
		"archive(tar.gz)": func() (*pack.Package, error) {
			return pack.ReadArchive(ctx, bytes.NewReader(tgzBytes), int64(len(tgzBytes)), lim)
		},
	}
	for name, fn := range read {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p, err := fn()
			if err != nil {
				t.Fatal(err)
			}
			checkPackage(t, p, lim)
			if p.Digest() != want {
				t.Errorf("digest %s, want %s\nmanifest:\n%s", p.Digest(), want, p.Manifest())
			}
			if p.Len() != len(files) {
				t.Errorf("%d files, want %d", p.Len(), len(files))
			}
		})
	}
}

func TestDigestChangesWithContent(t *testing.T) {
	t.Parallel()
	base := sampleFiles()
	d0 := mustNew(t, base, pack.Limits{}).Digest()

	change := map[string]func(fs []pack.File){
		"exec bit":     func(fs []pack.File) { fs[0].Exec = !fs[0].Exec },
		"one byte":     func(fs []pack.File) { fs[0].Data = append(slices.Clone(fs[0].Data[:len(fs[0].Data)-1]), '!') },
		"path renamed": func(fs []pack.File) { fs[1].Path = "scripts/run2.sh" },
	}
	for name, fn := range change {
		files := sampleFiles()
		fn(files)
		if d := mustNew(t, files, pack.Limits{}).Digest(); d == d0 {
			t.Errorf("%s: digest unchanged %s", name, d)
		}
	}
	extra := append(sampleFiles(), pack.File{Path: "new.txt"})
	if d := mustNew(t, extra, pack.Limits{}).Digest(); d == d0 {
		t.Errorf("added file: digest unchanged")
	}
}

func TestManifestFormat(t *testing.T) {
	t.Parallel()
	p := mustNew(t, []pack.File{
		{Path: "b", Data: []byte("b")},
		{Path: "a b/c", Data: []byte(""), Exec: true},
		{Path: "SKILL.md", Data: []byte("hi\n")},
	}, pack.Limits{})
	want := "100644 3 98ea6e4f216f2fb4b69fff9b3a44842c38686ca685f3f55dc48c5d3fb1107be4 SKILL.md\n" +
		"100755 0 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 a b/c\n" +
		"100644 1 3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d b\n"
	if got := string(p.Manifest()); got != want {
		t.Fatalf("manifest:\n%s\nwant:\n%s", got, want)
	}
	if p.Digest() != "sha256:"+sha256hex([]byte(want)) {
		t.Fatalf("digest %s is not sha256 of the manifest", p.Digest())
	}
	// Empty package: empty manifest, digest of nothing.
	e := mustNew(t, nil, pack.Limits{})
	if len(e.Manifest()) != 0 || e.Digest() != "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Fatalf("empty package: manifest %q digest %s", e.Manifest(), e.Digest())
	}
}

func TestBuildParseManifestRoundTrip(t *testing.T) {
	t.Parallel()
	p := mustNew(t, sampleFiles(), pack.Limits{})
	entries := p.Entries()
	shuffled := slices.Clone(entries)
	slices.Reverse(shuffled)
	m, d := pack.BuildManifest(shuffled)
	if !bytes.Equal(m, p.Manifest()) || d != p.Digest() {
		t.Fatalf("BuildManifest of reordered entries differs:\n%s", m)
	}
	parsed, err := pack.ParseManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(parsed, entries) {
		t.Fatalf("round trip: got %+v, want %+v", parsed, entries)
	}
	m2, _ := pack.BuildManifest(parsed)
	if !bytes.Equal(m2, m) {
		t.Fatalf("second round trip differs")
	}
}

func TestParseManifestRejectsNonCanonical(t *testing.T) {
	t.Parallel()
	const h = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	line := func(mode, size, hash, path string) string { return mode + " " + size + " " + hash + " " + path + "\n" }
	ok := line("100644", "0", h, "a") + line("100755", "0", h, "b")
	if _, err := pack.ParseManifest([]byte(ok)); err != nil {
		t.Fatalf("canonical manifest refused: %v", err)
	}
	bad := map[string]string{
		"unsorted":           line("100644", "0", h, "b") + line("100644", "0", h, "a"),
		"duplicate":          line("100644", "0", h, "a") + line("100644", "0", h, "a"),
		"case collision":     line("100644", "0", h, "README.md") + line("100644", "0", h, "Readme.md"),
		"file and folder":    line("100644", "0", h, "a") + line("100644", "0", h, "a/b"),
		"no final newline":   strings.TrimSuffix(line("100644", "0", h, "a"), "\n"),
		"crlf":               strings.TrimSuffix(line("100644", "0", h, "a"), "\n") + "\r\n",
		"empty line":         "\n",
		"blank trailing":     line("100644", "0", h, "a") + "\n",
		"mode 100664":        line("100664", "0", h, "a"),
		"mode 644":           line("644", "0", h, "a"),
		"size leading zero":  line("100644", "01", h, "a"),
		"size plus":          line("100644", "+1", h, "a"),
		"size negative":      line("100644", "-1", h, "a"),
		"size hex":           line("100644", "0x1", h, "a"),
		"size overflow":      line("100644", "9223372036854775808", h, "a"),
		"hash uppercase":     line("100644", "0", strings.ToUpper(h), "a"),
		"hash short":         line("100644", "0", h[:63], "a"),
		"hash long":          line("100644", "0", h+"0", "a"),
		"hash not hex":       line("100644", "0", "g"+h[1:], "a"),
		"hash with prefix":   line("100644", "0", "sha256:"+h, "a"),
		"double space":       "100644  0 " + h + " a\n",
		"tab separator":      "100644\t0\t" + h + "\ta\n",
		"missing path":       "100644 0 " + h + "\n",
		"empty path":         line("100644", "0", h, ""),
		"path dotdot":        line("100644", "0", h, "../a"),
		"path absolute":      line("100644", "0", h, "/a"),
		"path trailing sl":   line("100644", "0", h, "a/"),
		"path backslash":     line("100644", "0", h, `a\b`),
		"path control":       line("100644", "0", h, "a\rb"),
		"path invalid utf-8": line("100644", "0", h, "a\xffb"),
		"header line":        "# manifest\n" + line("100644", "0", h, "a"),
		"leading space":      " " + line("100644", "0", h, "a"),
	}
	for name, m := range bad {
		_, err := pack.ParseManifest([]byte(m))
		if err == nil {
			t.Errorf("%s: accepted %q", name, m)
			continue
		}
		if skilld.ErrorCode(err) != skilld.EINVALID {
			t.Errorf("%s: code %q, want %q (%v)", name, skilld.ErrorCode(err), skilld.EINVALID, err)
		}
	}
}

// TestDigestShellPipeline runs the shell script documented in
// docs/PACKAGE-FORMAT.md, extracted verbatim, on a real directory and
// compares its output with ReadDir's digest, so the documented recipe for
// other tools stays correct.
func TestDigestShellPipeline(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"sh", "sha256sum", "find", "sort", "sed", "wc", "cut", "tr"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not available: %v", tool, err)
		}
	}
	script := docPipeline(t)

	dir := t.TempDir()
	files := append(sampleFiles(),
		pack.File{Path: "a.b", Data: []byte("dot")},
		pack.File{Path: "a/c", Data: []byte("slash")},
		pack.File{Path: "a0", Data: []byte("zero")},
		pack.File{Path: "B", Data: []byte("upper")},
		pack.File{Path: " lead and trail ", Data: []byte("spaces")},
		pack.File{Path: "-n", Data: []byte("dash")},
		pack.File{Path: "日本/語.txt", Data: bytes.Repeat([]byte("x"), 100000)},
		pack.File{Path: "deep/er/still/x.py", Data: []byte("print(1)\n"), Exec: true},
	)
	writeTree(t, dir, files)
	// Any one execute bit makes a file executable, not just the owner's.
	for path, mode := range map[string]os.FileMode{"a.b": 0o654, "a0": 0o645, "B": 0o744} {
		if err := os.Chmod(filepath.Join(dir, path), mode); err != nil {
			t.Fatal(err)
		}
	}
	// Skipped by ReadDir and by the script.
	writeTree(t, dir, []pack.File{{Path: "__MACOSX/x", Data: []byte("mac")}, {Path: "sub/._x", Data: []byte("apple")}})

	p, err := pack.ReadDir(context.Background(), dir, pack.ArchiveLimits())
	if err != nil {
		t.Fatal(err)
	}
	if p.Len() != len(files) {
		t.Fatalf("ReadDir read %d files, want %d", p.Len(), len(files))
	}
	for _, path := range []string{"a.b", "a0", "B"} {
		if f, _ := p.File(path); !f.Exec {
			t.Fatalf("%s not executable", path)
		}
	}

	cmd := exec.Command("sh", "-c", script, "sh", dir)
	cmd.Env = append(os.Environ(), "LC_ALL=en_US.UTF-8")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("script failed: %v\n%s", err, stderr.Bytes())
	}
	if got := strings.TrimSpace(string(out)); got != p.Digest() {
		t.Fatalf("shell digest %s, Package.Digest %s\nmanifest:\n%s", got, p.Digest(), p.Manifest())
	}

	// An empty directory has the digest of an empty manifest.
	empty := t.TempDir()
	out, err = exec.Command("sh", "-c", script, "sh", empty).Output()
	if err != nil {
		t.Fatal(err)
	}
	ep, err := pack.ReadDir(context.Background(), empty, pack.ArchiveLimits())
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != ep.Digest() {
		t.Fatalf("empty dir: shell %s, Go %s", got, ep.Digest())
	}
}

// docPipeline extracts the sh block that follows the digest-pipeline marker
// in docs/PACKAGE-FORMAT.md.
func docPipeline(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "docs", "PACKAGE-FORMAT.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "<!-- digest-pipeline")
	if !ok {
		t.Fatal("digest-pipeline marker not found in docs/PACKAGE-FORMAT.md")
	}
	_, rest, ok = strings.Cut(rest, "```sh\n")
	if !ok {
		t.Fatal("no sh block after the digest-pipeline marker")
	}
	script, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatal("unterminated sh block")
	}
	return script
}
