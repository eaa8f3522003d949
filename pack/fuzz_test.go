package pack_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
)

// Fuzz targets run their seeds in every `go test`. Seeds come from three
// places: f.Add with the committed hostile corpus and freshly built valid
// archives, and the generated files under testdata/fuzz/<FuzzName>/seed-*
// (kept in sync by TestHostileCorpus), next to which `go test -fuzz` drops
// any failing input it finds.

// fuzzLimits are small so that each fuzz iteration stays cheap, but not so
// small that valid seeds are refused.
var fuzzLimits = pack.Limits{MaxFiles: 64, MaxFileSize: 1 << 20, MaxTotalSize: 4 << 20, MaxDepth: 8, MaxPathLen: 256, MaxRatio: 100}

// validArchiveFiles is the skill the valid seeds hold, under a top folder.
func validArchiveFiles() []pack.File {
	var fs []pack.File
	for _, f := range sampleFiles() {
		f.Path = "my-skill/" + f.Path
		fs = append(fs, f)
	}
	return fs
}

func validZip(tb testing.TB, deflate bool) []byte {
	var zs []zipFile
	for _, f := range validArchiveFiles() {
		mode := os.FileMode(0o644)
		if f.Exec {
			mode = 0o755
		}
		zs = append(zs, zipFile{Name: f.Path, Data: f.Data, Mode: mode, Deflate: deflate})
	}
	zs = append(zs, zipFile{Name: "__MACOSX/my-skill/._SKILL.md", Data: []byte("apple")})
	return buildZip(tb, zs...)
}

func validTar(tb testing.TB) []byte {
	return tarOf(tb, append(validArchiveFiles(), pack.File{Path: "my-skill/._SKILL.md", Data: []byte("apple")}))
}

// fuzzSeeds returns the generated seed files, by path, for TestHostileCorpus
// to write or verify. Archives are stored, not deflated, for the same reason
// as the hostile corpus.
func fuzzSeeds(tb testing.TB, hostile []hostileCase) map[string][]byte {
	seeds := map[string][]byte{}
	add := func(fuzz, name string, v any) {
		var line string
		switch v := v.(type) {
		case string:
			line = "string(" + fmtQ(v) + ")"
		case []byte:
			line = "[]byte(" + fmtQ(string(v)) + ")"
		}
		seeds[filepath.Join("testdata", "fuzz", fuzz, "seed-"+name)] = []byte("go test fuzz v1\n" + line + "\n")
	}
	for _, c := range hostile {
		switch filepath.Ext(c.file) {
		case ".zip":
			add("FuzzReadZip", c.file, c.data)
		case ".tar":
			add("FuzzReadTar", c.file, c.data)
		}
	}
	add("FuzzReadZip", "valid.zip", validZip(tb, false))
	add("FuzzReadTar", "valid.tar", validTar(tb))
	add("FuzzReadTar", "valid.tar.gz", storedGzip(validTar(tb)))
	for name, p := range map[string]string{
		"skill":     "SKILL.md",
		"nested":    "scripts/lib/run.sh",
		"dotdot":    "a/../b",
		"backslash": `a\b`,
		"drive":     "C:/x",
		"c1":        "a\u0085b",
		"unicode":   "café/日本.md",
	} {
		add("FuzzCheckPath", name, p)
	}
	m := mustNew(tb, sampleFiles(), pack.Limits{}).Manifest()
	add("FuzzParseManifest", "valid", m)
	lines := bytes.SplitAfter(m, []byte("\n"))
	add("FuzzParseManifest", "swapped", bytes.Join([][]byte{lines[1], lines[0]}, nil))
	return seeds
}

// addCorpus adds every committed hostile file with one of exts as a seed.
func addCorpus(f *testing.F, exts ...string) {
	entries, err := os.ReadDir(filepath.Join("testdata", "hostile"))
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		for _, ext := range exts {
			if strings.HasSuffix(e.Name(), ext) {
				b, err := os.ReadFile(filepath.Join("testdata", "hostile", e.Name()))
				if err != nil {
					f.Fatal(err)
				}
				f.Add(b)
			}
		}
	}
}

// checkReadResult holds the invariants for any reader output: either a
// typed error (or a context error) or a package that passes checkPackage.
func checkReadResult(t *testing.T, p *pack.Package, err error) {
	t.Helper()
	if err != nil {
		if p != nil {
			t.Fatalf("both a package and an error: %v", err)
		}
		var se *skilld.Error
		if !errors.As(err, &se) {
			t.Fatalf("untyped error %T: %v", err, err)
		}
		return
	}
	checkPackage(t, p, fuzzLimits)
}

func FuzzCheckPath(f *testing.F) {
	for _, s := range []string{"", "a", "a/b", "../x", "/x", "x/", `x\y`, "a\x00", "C:", "é", strings.Repeat("a/", 600)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		err := pack.CheckPath(p)
		if err != nil {
			if !errors.Is(err, pack.ErrUnsafePath) || skilld.ErrorCode(err) != skilld.EINVALID {
				t.Fatalf("CheckPath(%q) error not ErrUnsafePath/EINVALID: %v", p, err)
			}
			if _, err := pack.New([]pack.File{{Path: p}}, pack.Limits{}); err == nil {
				t.Fatalf("New accepted %q that CheckPath refuses", p)
			}
			return
		}
		// A safe path survives a round trip through a manifest and a
		// package, and joining it below a root never leaves the root.
		pkg, err := pack.New([]pack.File{{Path: p, Data: []byte(p)}}, pack.Limits{})
		if err != nil {
			t.Fatalf("New refused a path CheckPath accepts: %v", err)
		}
		checkPackage(t, pkg, pack.Limits{})
		joined := filepath.Join("/root", filepath.FromSlash(p))
		if !strings.HasPrefix(joined, "/root/") || filepath.Clean(joined) != joined {
			t.Fatalf("path %q joins to %q", p, joined)
		}
		if !filepath.IsLocal(filepath.FromSlash(p)) {
			t.Fatalf("path %q is not local", p)
		}
	})
}

func FuzzReadZip(f *testing.F) {
	addCorpus(f, ".zip")
	f.Add(validZip(f, true))
	f.Add(validZip(f, false))
	f.Fuzz(func(t *testing.T, b []byte) {
		ctx := context.Background()
		p, err := pack.ReadZip(ctx, bytes.NewReader(b), int64(len(b)), fuzzLimits)
		checkReadResult(t, p, err)
		p2, err2 := pack.ReadArchive(ctx, bytes.NewReader(b), int64(len(b)), fuzzLimits)
		checkReadResult(t, p2, err2)
		if err == nil && err2 == nil && p.Digest() != p2.Digest() {
			t.Fatalf("ReadZip and ReadArchive disagree: %s vs %s", p.Digest(), p2.Digest())
		}
	})
}

// FuzzReadTar feeds each input to ReadTar and ReadTarGz (and ReadArchive),
// so the seeds cover plain and gzip-compressed tar.
func FuzzReadTar(f *testing.F) {
	addCorpus(f, ".tar")
	f.Add(validTar(f))
	f.Add(gzipBytes(f, validTar(f)))
	f.Add(storedGzip(validTar(f)))
	f.Fuzz(func(t *testing.T, b []byte) {
		ctx := context.Background()
		p, err := pack.ReadTar(ctx, bytes.NewReader(b), fuzzLimits)
		checkReadResult(t, p, err)
		p, err = pack.ReadTarGz(ctx, bytes.NewReader(b), fuzzLimits)
		checkReadResult(t, p, err)
		p, err = pack.ReadArchive(ctx, bytes.NewReader(b), int64(len(b)), fuzzLimits)
		checkReadResult(t, p, err)
	})
}

func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(""))
	f.Add(mustNew(f, validArchiveFiles(), pack.Limits{}).Manifest())
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, err := pack.ParseManifest(b)
		if err != nil {
			if skilld.ErrorCode(err) != skilld.EINVALID {
				t.Fatalf("error code %q: %v", skilld.ErrorCode(err), err)
			}
			return
		}
		// Strict inverse: whatever parses is already canonical.
		m, _ := pack.BuildManifest(entries)
		if !bytes.Equal(m, b) {
			t.Fatalf("ParseManifest accepted non-canonical input:\n%q\ncanonical:\n%q", b, m)
		}
		for _, e := range entries {
			if err := pack.CheckPath(e.Path); err != nil {
				t.Fatalf("parsed unsafe path: %v", err)
			}
		}
	})
}
