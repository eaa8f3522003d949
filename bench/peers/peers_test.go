package peers

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	adkskill "google.golang.org/adk/tool/skilltoolset/skill"
	trpcskill "trpc.group/trpc-go/trpc-agent-go/skill"

	"github.com/skilld/skilld/skillmd"
)

const (
	corpusSkills = 1000
	// oneSkill is the skill the LoadOne benchmarks load.
	oneSkill = "skill-0500"
)

// corpus returns the corpus directory: $SKILLD_BENCH_CORPUS, or
// /tmp/skillcorpus/corpus. It skips the benchmark when it is missing.
func corpus(b *testing.B) string {
	dir := os.Getenv("SKILLD_BENCH_CORPUS")
	if dir == "" {
		dir = "/tmp/skillcorpus/corpus"
	}
	if _, err := os.Stat(filepath.Join(dir, oneSkill, "SKILL.md")); err != nil {
		b.Skipf("no corpus at %s (%v): generate it with (cd ../shared/bench/corpusgen && go run . /tmp/skillcorpus) from the project root, or set SKILLD_BENCH_CORPUS to its corpus/ directory", dir, err)
	}
	return dir
}

var frontmatterEnd = []byte("\n---\n")

// BenchmarkAll1000 is "list + parse + validate all 1,000 SKILL.md".
func BenchmarkAll1000(b *testing.B) {
	dir := corpus(b)
	ctx := context.Background()

	// floor: the standard library's floor, list the corpus, read every
	// SKILL.md and split off its frontmatter. No YAML, no checks.
	b.Run("floor", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			entries, err := os.ReadDir(dir)
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for _, e := range entries {
				if !e.IsDir() {
					continue
				}
				data, err := os.ReadFile(filepath.Join(dir, e.Name(), "SKILL.md"))
				if err != nil {
					b.Fatal(err)
				}
				if !bytes.HasPrefix(data, []byte("---\n")) {
					b.Fatal(e.Name())
				}
				if _, _, ok := bytes.Cut(data[4:], frontmatterEnd); !ok {
					b.Fatal(e.Name())
				}
				n++
			}
			if n != corpusSkills {
				b.Fatalf("%d skills", n)
			}
		}
	})

	b.Run("skilld-discover-checkdir", func(b *testing.B) {
		fsys := os.DirFS(dir)
		b.ReportAllocs()
		for b.Loop() {
			dirs, err := skillmd.Discover(ctx, fsys, ".")
			if err != nil || len(dirs) != corpusSkills {
				b.Fatalf("%d skills, %v", len(dirs), err)
			}
			for _, d := range dirs {
				if r := skillmd.CheckDir(fsys, d, skillmd.Options{}); !r.Valid() {
					b.Fatal(d, r.Errors)
				}
			}
		}
	})

	b.Run("skilld-find-checkfound", func(b *testing.B) {
		fsys := os.DirFS(dir)
		b.ReportAllocs()
		for b.Loop() {
			found, err := skillmd.Find(ctx, fsys, ".")
			if err != nil || len(found) != corpusSkills {
				b.Fatalf("%d skills, %v", len(found), err)
			}
			for _, f := range found {
				if r := skillmd.CheckFound(fsys, f, skillmd.Options{}); !r.Valid() {
					b.Fatal(f, r.Errors)
				}
			}
		}
	})

	b.Run("skilld-load-checkloaded", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			loaded, err := skillmd.Load(ctx, dir)
			if err != nil || len(loaded) != corpusSkills {
				b.Fatalf("%d skills, %v", len(loaded), err)
			}
			for _, l := range loaded {
				if r := skillmd.CheckLoaded(l, skillmd.Options{}); !r.Valid() {
					b.Fatal(l.Found, r.Errors)
				}
			}
		}
	})

	// adk: what its list_skills tool calls. ListFrontmatters reads the root,
	// opens each <dir>/SKILL.md, decodes the frontmatter with yaml.v3
	// (KnownFields), validates it (skill.Validate) and requires the name to
	// match the directory.
	b.Run("adk", func(b *testing.B) {
		fsys := os.DirFS(dir)
		b.ReportAllocs()
		for b.Loop() {
			src := adkskill.NewFileSystemSource(fsys)
			fms, err := src.ListFrontmatters(ctx)
			if err != nil || len(fms) != corpusSkills {
				b.Fatalf("%d skills, %v", len(fms), err)
			}
		}
	})

	// trpc: NewFSRepository walks the root and parses each SKILL.md's
	// frontmatter into its index (the list + parse); Summaries then returns
	// the sorted summaries (one os.Stat per skill against its cache).
	// trpc-agent-go does not validate: a name or description is taken as is.
	b.Run("trpc", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			repo, err := trpcskill.NewFSRepository(dir)
			if err != nil {
				b.Fatal(err)
			}
			if s := repo.Summaries(); len(s) != corpusSkills {
				b.Fatalf("%d skills", len(s))
			}
		}
	})
}

// BenchmarkLoadOne is "load one skill's instructions": read one SKILL.md and
// return its Markdown body.
func BenchmarkLoadOne(b *testing.B) {
	dir := corpus(b)
	ctx := context.Background()
	file := filepath.Join(dir, oneSkill, "SKILL.md")

	// floor: read the file and split off the frontmatter.
	b.Run("floor", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			data, err := os.ReadFile(file)
			if err != nil {
				b.Fatal(err)
			}
			_, body, ok := bytes.Cut(data[4:], frontmatterEnd)
			if !ok || len(body) == 0 {
				b.Fatal("no body")
			}
		}
	})

	// skilld: ParseFile reads the file and parses and validates it,
	// requiring the name to match the folder, as adk does.
	b.Run("skilld", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s, _, err := skillmd.ParseFile(file, skillmd.Options{})
			if err != nil || s.Body == "" {
				b.Fatal(err)
			}
		}
	})

	// adk: LoadInstructions opens SKILL.md, parses and validates the
	// frontmatter (as ListFrontmatters does) and reads the rest.
	b.Run("adk", func(b *testing.B) {
		src := adkskill.NewFileSystemSource(os.DirFS(dir))
		b.ReportAllocs()
		for b.Loop() {
			body, err := src.LoadInstructions(ctx, oneSkill)
			if err != nil || body == "" {
				b.Fatal(err)
			}
		}
	})

	// trpc: Get, on a repository indexed once outside the loop, re-reads
	// SKILL.md and splits off the body; it also reads the skill's doc files
	// (*.md, *.txt: here references/notes.md), as its skill_load tool does.
	b.Run("trpc", func(b *testing.B) {
		repo, err := trpcskill.NewFSRepository(dir)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			s, err := repo.Get(oneSkill)
			if err != nil || strings.TrimSpace(s.Body) == "" {
				b.Fatal(err)
			}
		}
	})
}
