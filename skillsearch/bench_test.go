package skillsearch_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/skilld/skilld/skillsearch"
)

// generated returns n skills made of words drawn from a Zipf-like
// vocabulary, about as long as real ones (a 25-word description, five
// headings), so that the benchmarks see realistic posting lists.
func generated(n int) []skillsearch.Skill {
	rng := rand.New(rand.NewPCG(1, 2))
	vocab := make([]string, 5000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%dx%s", i, strings.Repeat("a", i%5))
	}
	zipf := rand.NewZipf(rand.New(rand.NewPCG(3, 4)), 1.1, 2, uint64(len(vocab)-1))
	words := func(k int) string {
		var b strings.Builder
		for range k {
			b.WriteString(vocab[zipf.Uint64()])
			b.WriteByte(' ')
		}
		return b.String()
	}
	out := make([]skillsearch.Skill, n)
	for i := range out {
		out[i] = skillsearch.Skill{Name: fmt.Sprintf("skill-%d-%s", i, vocab[rng.IntN(len(vocab))]), Description: words(25)}
		for range 5 {
			out[i].Headings = append(out[i].Headings, words(3))
		}
	}
	return out
}

// benchQueries are six-word queries from the same vocabulary.
func benchQueries(skills []skillsearch.Skill) []string {
	var qs []string
	for i := 0; i < len(skills); i += len(skills) / 50 {
		f := strings.Fields(skills[i].Description)
		qs = append(qs, strings.Join(f[:6], " "))
	}
	return qs
}

// BenchmarkSearch10k: one search_skills query over 10,000 skills.
func BenchmarkSearch10k(b *testing.B) {
	skills := generated(10_000)
	ix := skillsearch.New(skills)
	qs := benchQueries(skills)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		ix.Search(qs[i%len(qs)], 8)
		i++
	}
}

// BenchmarkSubstring10k is the floor: the same queries answered by
// substring matching over every name and description.
func BenchmarkSubstring10k(b *testing.B) {
	skills := generated(10_000)
	qs := benchQueries(skills)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		skillsearch.Substring(skills, qs[i%len(qs)], 8)
		i++
	}
}

// BenchmarkBuild10k: indexing 10,000 skills, once per run that needs it
// (or once per set of skills, with a Cache).
func BenchmarkBuild10k(b *testing.B) {
	skills := generated(10_000)
	b.ReportAllocs()
	for b.Loop() {
		skillsearch.New(skills)
	}
}

// BenchmarkCacheKey10k: the cost of finding a cached index, which hashes
// every field of the skills.
func BenchmarkCacheKey10k(b *testing.B) {
	skills := generated(10_000)
	var c skillsearch.Cache
	c.Index(skills)
	for b.Loop() {
		c.Index(skills)
	}
}
