package skillmd_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/skilld/skilld/skillmd"
)

// BenchmarkCheck parses and validates one typical SKILL.md (frontmatter with
// the optional fields and a page of instructions).
func BenchmarkCheck(b *testing.B) {
	data, err := os.ReadFile("../examples/skills/csv-inspector/SKILL.md")
	if err != nil {
		b.Fatal(err)
	}
	opts := skillmd.Options{Dir: "csv-inspector"}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if r := skillmd.Check(data, opts); !r.Valid() {
			b.Fatal(r.Errors)
		}
	}
}

// corpus is the shared benchmark corpus (../shared/bench/corpusgen, run
// as `go run . DIR`), named by SKILLD_BENCH_CORPUS=DIR/corpus.
func corpus(b *testing.B) string {
	dir := os.Getenv("SKILLD_BENCH_CORPUS")
	if dir == "" {
		b.Skip("SKILLD_BENCH_CORPUS is not set: generate the corpus with (cd ../shared/bench/corpusgen && go run . /tmp/skillcorpus) and set it to /tmp/skillcorpus/corpus")
	}
	return dir
}

// BenchmarkCorpus1000 discovers the corpus's 1,000 skills and checks each
// one (skillmd.Discover, then CheckDir): the pass every skills tool makes
// first, the peers' "list + parse + validate".
func BenchmarkCorpus1000(b *testing.B) {
	fsys := os.DirFS(corpus(b))
	b.ReportAllocs()
	for b.Loop() {
		dirs, err := skillmd.Discover(b.Context(), fsys, ".")
		if err != nil || len(dirs) != 1000 {
			b.Fatalf("%d skills, %v", len(dirs), err)
		}
		for _, d := range dirs {
			if r := skillmd.CheckDir(fsys, d, skillmd.Options{}); !r.Valid() {
				b.Fatal(d, r.Errors)
			}
		}
	}
}

// BenchmarkFind1000 is BenchmarkCorpus1000 through Find and CheckFound,
// which read each skill's directory once.
func BenchmarkFind1000(b *testing.B) {
	fsys := os.DirFS(corpus(b))
	b.ReportAllocs()
	for b.Loop() {
		found, err := skillmd.Find(b.Context(), fsys, ".")
		if err != nil || len(found) != 1000 {
			b.Fatalf("%d skills, %v", len(found), err)
		}
		for _, f := range found {
			if r := skillmd.CheckFound(fsys, f, skillmd.Options{}); !r.Valid() {
				b.Fatal(f, r.Errors)
			}
		}
	}
}

// BenchmarkLoad1000 is BenchmarkCorpus1000 through Load and CheckLoaded:
// one open, stat and read a skill.
func BenchmarkLoad1000(b *testing.B) {
	root := corpus(b)
	b.ReportAllocs()
	for b.Loop() {
		loaded, err := skillmd.Load(b.Context(), root)
		if err != nil || len(loaded) != 1000 {
			b.Fatalf("%d skills, %v", len(loaded), err)
		}
		for _, l := range loaded {
			if r := skillmd.CheckLoaded(l, skillmd.Options{}); !r.Valid() {
				b.Fatal(l.Found, r.Errors)
			}
		}
	}
}

// BenchmarkLoadOne reads one skill's SKILL.md and parses it with its body
// (ParseFile), the peers' "load one skill's instructions".
func BenchmarkLoadOne(b *testing.B) {
	path := filepath.Join(corpus(b), "skill-0500", "SKILL.md")
	b.ReportAllocs()
	for b.Loop() {
		s, _, err := skillmd.ParseFile(path, skillmd.Options{})
		if err != nil || s.Body == "" {
			b.Fatal(err)
		}
	}
}

// BenchmarkCorpusFloor is the standard library's floor under
// BenchmarkCorpus1000: list the corpus, read every SKILL.md and split off
// its frontmatter, no YAML and no checks.
func BenchmarkCorpusFloor(b *testing.B) {
	fsys := os.DirFS(corpus(b))
	b.ReportAllocs()
	for b.Loop() {
		entries, err := fs.ReadDir(fsys, ".")
		if err != nil {
			b.Fatal(err)
		}
		for _, e := range entries {
			data, err := fs.ReadFile(fsys, e.Name()+"/SKILL.md")
			if err != nil {
				b.Fatal(err)
			}
			if _, _, ok := bytes.Cut(data[4:], []byte("\n---\n")); !ok {
				b.Fatal(e.Name())
			}
		}
	}
}

// BenchmarkCheckCorpus checks the corpus's 1,000 SKILL.md from memory:
// the parse and validation cost alone, without the file system.
func BenchmarkCheckCorpus(b *testing.B) {
	fsys := os.DirFS(corpus(b))
	found, err := skillmd.Find(b.Context(), fsys, ".")
	if err != nil {
		b.Fatal(err)
	}
	files := make([][]byte, len(found))
	for i, f := range found {
		if files[i], err = fs.ReadFile(fsys, f.Path()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		for i, data := range files {
			if r := skillmd.Check(data, skillmd.Options{Dir: found[i].Dir}); !r.Valid() {
				b.Fatal(r.Errors)
			}
		}
	}
}
