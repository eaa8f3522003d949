package importer_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/skilld/skilld/importer"
	"github.com/skilld/skilld/importer/githubtest"
	"github.com/skilld/skilld/pack"
)

// benchRepo is a repository whose archive is just under the 25 MiB limit:
// five skills of about 4.8 MiB each (SKILL.md, a script, four data files)
// plus some files outside any skill. The data is random, so it does not
// compress and the archive really is ~25 MiB on the wire.
func benchRepo(tb testing.TB) []byte {
	rng := rand.NewChaCha8([32]byte{1})
	random := func(n int) string {
		b := make([]byte, n)
		_, _ = rng.Read(b)
		return string(b)
	}
	files := []file{{Name: "README.md", Data: "# bench\n"}, {Name: "assets/blob.bin", Data: random(512 << 10)}}
	for i := range 5 {
		dir := fmt.Sprintf("skills/skill-%d/", i)
		files = append(files,
			file{Name: dir + "SKILL.md", Data: githubtest.SkillMD(fmt.Sprintf("skill-%d", i))},
			file{Name: dir + "scripts/run.sh", Data: "#!/bin/sh\n", Mode: 0o755})
		for j := range 4 {
			files = append(files, file{Name: fmt.Sprintf("%sdata/%d.bin", dir, j), Data: random(1200 << 10)})
		}
	}
	archive := repoArchive(files...)
	if len(archive) > pack.GitHubMaxArchiveSize {
		tb.Fatalf("benchmark archive is %d bytes, over the limit", len(archive))
	}
	return archive
}

func benchFetch(b *testing.B, run func(*importer.GitHub, importer.Source) ([]importer.Candidate, error), want int) {
	f := newFakeGitHub(b)
	f.Archives["main"] = benchRepo(b)
	g := f.client("")
	src, err := importer.ParseGitHubURL("https://github.com/o/r/tree/main")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(f.Archives["main"])))
	b.ReportAllocs()
	for b.Loop() {
		cands, err := run(g, src)
		if err != nil || len(cands) != want {
			b.Fatalf("%d candidates, %v", len(cands), err)
		}
	}
}

// BenchmarkFetch25MB downloads a ~25 MiB archive over loopback HTTP (with
// the API's 302 to the download host), walks it twice and builds all five
// packages (~24 MiB of files, all hashed).
func BenchmarkFetch25MB(b *testing.B) {
	benchFetch(b, func(g *importer.GitHub, src importer.Source) ([]importer.Candidate, error) {
		c, _, err := g.Fetch(context.Background(), src)
		return c, err
	}, 5)
}

// BenchmarkImportOne25MB is the same download with one skill selected:
// the second pass reads only its ~4.8 MiB.
func BenchmarkImportOne25MB(b *testing.B) {
	benchFetch(b, func(g *importer.GitHub, src importer.Source) ([]importer.Candidate, error) {
		c, _, err := g.Import(context.Background(), src, "skill-3", false)
		return c, err
	}, 1)
}
