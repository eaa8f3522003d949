// Package skillsearch finds skills by what they do: an index over their
// names, descriptions and SKILL.md headings, built once, that answers a
// free-text query with the best matches. Agents use it when they have
// more skills than their catalog can list.
//
// Ranking is BM25F: each skill is one document of three fields (name,
// description, headings), a term's frequency in each field is normalized
// by that field's length and weighted (a word of the name counts most),
// and the sum is saturated and weighted by the term's rarity. Words are
// matched after Tokens normalizes them (lower case, simple stemming); a
// query word the index lacks matches the indexed words it begins.
package skillsearch

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"strings"
)

// Skill is what the index knows of one skill.
type Skill struct {
	Name        string
	Description string
	Headings    []string
}

// Hit is one match: the skill's position in the slice the index was
// built from, and its score (higher is better).
type Hit struct {
	Index int
	Score float64
}

// Field weights and length normalization of BM25F, and its saturation.
const (
	weightName        = 3.0
	weightDescription = 1.0
	weightHeadings    = 0.5
	bName             = 0.3
	bDescription      = 0.75
	bHeadings         = 0.75
	k1                = 1.2
	// prefixWeight discounts a match through prefix expansion, and
	// maxExpansions bounds the words one query word expands to.
	prefixWeight  = 0.5
	maxExpansions = 16
	minPrefix     = 3
	// fullNameBonus is added when the query holds every word of a
	// skill's name, so a query that names a skill finds it first.
	fullNameBonus = 2.0
)

// Index is an immutable search index; it is safe for concurrent use.
type Index struct {
	n        int
	names    [][]string // each skill's name terms, for the full-name bonus
	postings map[string][]posting
	vocab    []string // the indexed terms, sorted, for prefix matches
}

// posting is a skill a term occurs in, with the term's whole contribution
// to the skill's score: BM25F's per-term score depends on the skill and
// the term alone, so it is computed once, when the index is built.
type posting struct {
	doc    int32
	impact float32
}

// New indexes skills. The hits of Search refer to positions in skills.
func New(skills []Skill) *Index {
	type fieldTerms struct{ name, desc, heads []string }
	docs := make([]fieldTerms, len(skills))
	var sumName, sumDesc, sumHeads float64
	for i, s := range skills {
		d := fieldTerms{name: Tokens(s.Name), desc: Tokens(s.Description)}
		for _, h := range s.Headings {
			d.heads = append(d.heads, Tokens(h)...)
		}
		docs[i] = d
		sumName += float64(len(d.name))
		sumDesc += float64(len(d.desc))
		sumHeads += float64(len(d.heads))
	}
	n := float64(max(len(skills), 1))
	avgName, avgDesc, avgHeads := max(sumName/n, 1), max(sumDesc/n, 1), max(sumHeads/n, 1)

	// Weighted, length-normalized frequencies per skill and term.
	type tf struct {
		doc int32
		tf  float64
	}
	freqs := map[string][]tf{}
	ix := &Index{n: len(skills), names: make([][]string, len(skills))}
	for i, d := range docs {
		ix.names[i] = d.name
		local := map[string]float64{}
		add := func(terms []string, w, b, avg float64) {
			norm := w / (1 - b + b*float64(len(terms))/avg)
			for _, t := range terms {
				local[t] += norm
			}
		}
		add(d.name, weightName, bName, avgName)
		add(d.desc, weightDescription, bDescription, avgDesc)
		add(d.heads, weightHeadings, bHeadings, avgHeads)
		for t, f := range local {
			freqs[t] = append(freqs[t], tf{int32(i), f})
		}
	}
	ix.postings = make(map[string][]posting, len(freqs))
	ix.vocab = make([]string, 0, len(freqs))
	for t, list := range freqs {
		df := float64(len(list))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		ps := make([]posting, len(list))
		for j, e := range list {
			ps[j] = posting{doc: e.doc, impact: float32(idf * e.tf * (k1 + 1) / (k1 + e.tf))}
		}
		slices.SortFunc(ps, func(a, b posting) int { return cmp.Compare(a.doc, b.doc) })
		ix.postings[t] = ps
		ix.vocab = append(ix.vocab, t)
	}
	slices.Sort(ix.vocab)
	return ix
}

// Len is the number of skills indexed.
func (ix *Index) Len() int { return ix.n }

// Search returns at most k skills matching query, best first; ties go to
// the skill given first. A query with no indexed word matches nothing.
func (ix *Index) Search(query string, k int) []Hit {
	terms := Tokens(query)
	if k <= 0 || ix.n == 0 || len(terms) == 0 {
		return nil
	}
	scores := make([]float32, ix.n)
	var touched []int32
	add := func(ps []posting, w float32) {
		for _, p := range ps {
			if scores[p.doc] == 0 {
				touched = append(touched, p.doc)
			}
			scores[p.doc] += w * p.impact
		}
	}
	seen := map[string]bool{}
	for _, t := range terms {
		if seen[t] {
			continue
		}
		seen[t] = true
		if ps, ok := ix.postings[t]; ok {
			add(ps, 1)
			continue
		}
		for _, e := range ix.expand(t) {
			add(ix.postings[e], prefixWeight)
		}
	}
	for _, d := range touched {
		if name := ix.names[d]; len(name) > 0 && containsAll(seen, name) {
			scores[d] += fullNameBonus * float32(len(name))
		}
	}
	return top(touched, scores, k)
}

// expand returns the indexed terms that start with t (a word the index
// lacks, such as "kube" for "kubernetes"), when t is long enough to mean
// something.
func (ix *Index) expand(t string) []string {
	if len(t) < minPrefix {
		return nil
	}
	i := sort.SearchStrings(ix.vocab, t)
	var out []string
	for ; i < len(ix.vocab) && strings.HasPrefix(ix.vocab[i], t) && len(out) < maxExpansions; i++ {
		out = append(out, ix.vocab[i])
	}
	return out
}

func containsAll(set map[string]bool, terms []string) bool {
	for _, t := range terms {
		if !set[t] {
			return false
		}
	}
	return true
}

// top picks the k best of the touched skills, best first, ties to the
// lower position.
func top(touched []int32, scores []float32, k int) []Hit {
	better := func(a, b int32) bool {
		return scores[a] > scores[b] || (scores[a] == scores[b] && a < b)
	}
	best := make([]int32, 0, k+1)
	for _, d := range touched {
		if len(best) == k && !better(d, best[k-1]) {
			continue
		}
		i := sort.Search(len(best), func(i int) bool { return better(d, best[i]) })
		best = slices.Insert(best, i, d)
		if len(best) > k {
			best = best[:k]
		}
	}
	out := make([]Hit, len(best))
	for i, d := range best {
		out[i] = Hit{Index: int(d), Score: float64(scores[d])}
	}
	return out
}
