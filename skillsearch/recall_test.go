package skillsearch_test

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"os"
	"testing"

	"github.com/skilld/skilld/skillsearch"
)

// corpusSkill is one line of testdata/corpus.jsonl.gz: a skill of a
// public repository (at the commit it was read from) and the queries
// derived from it (testdata/make_corpus.py says how).
type corpusSkill struct {
	Repo        string   `json:"repo"`
	Commit      string   `json:"commit"`
	Path        string   `json:"path"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Headings    []string `json:"headings"`
	Queries     struct {
		Description string `json:"description"`
		Body        string `json:"body"`
	} `json:"queries"`
}

func readCorpus(t testing.TB) []corpusSkill {
	f, err := os.Open("testdata/corpus.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []corpusSkill
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var s corpusSkill
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// recall is the share of queries whose skill is among the first k hits.
type recall struct{ at1, at5, queries int }

func (r *recall) add(target int, hits []skillsearch.Hit) {
	r.queries++
	for i, h := range hits {
		if h.Index == target {
			if i == 0 {
				r.at1++
			}
			if i < 5 {
				r.at5++
			}
		}
	}
}

func (r recall) rates() (float64, float64) {
	return float64(r.at1) / float64(r.queries), float64(r.at5) / float64(r.queries)
}

// TestRecall measures search_skills' index on 1,000+ real skills from
// public repositories, against the substring floor, with two query sets:
// one derived from each skill's description, one from its SKILL.md body
// (which is not indexed), neither naming the skill. It reports recall@1
// and recall@5 (go test -run Recall -v) and holds the index to floors a
// little under the measured values (docs/PERFORMANCE.md), and above the
// substring search's.
func TestRecall(t *testing.T) {
	corpus := readCorpus(t)
	if len(corpus) < 1000 {
		t.Fatalf("the corpus has %d skills", len(corpus))
	}
	skills := make([]skillsearch.Skill, len(corpus))
	for i, s := range corpus {
		if s.Repo == "" || len(s.Commit) != 40 || s.Path == "" {
			t.Fatalf("skill %d has no source: %+v", i, s)
		}
		skills[i] = skillsearch.Skill{Name: s.Name, Description: s.Description, Headings: s.Headings}
	}
	ix := skillsearch.New(skills)
	for _, set := range []struct {
		name     string
		query    func(corpusSkill) string
		at1, at5 float64 // floors for the index: the measured values less a margin
		// beats: the index must do better than substring matching (on
		// description queries, which are nearly the description's words,
		// both are close to perfect).
		beats bool
	}{
		{"description", func(s corpusSkill) string { return s.Queries.Description }, 0.90, 0.95, false},
		{"body", func(s corpusSkill) string { return s.Queries.Body }, 0.70, 0.85, true},
	} {
		var index, substring recall
		for i, s := range corpus {
			q := set.query(s)
			if q == "" {
				continue
			}
			index.add(i, ix.Search(q, 5))
			substring.add(i, skillsearch.Substring(skills, q, 5))
		}
		i1, i5 := index.rates()
		s1, s5 := substring.rates()
		t.Logf("%s queries (%d of %d skills): index recall@1 %.3f recall@5 %.3f; substring recall@1 %.3f recall@5 %.3f",
			set.name, index.queries, len(corpus), i1, i5, s1, s5)
		if i1 < set.at1 || i5 < set.at5 {
			t.Errorf("%s queries: recall@1 %.3f, recall@5 %.3f, below the floors %.2f and %.2f", set.name, i1, i5, set.at1, set.at5)
		}
		if set.beats && (i1 <= s1 || i5 <= s5) {
			t.Errorf("%s queries: the index does no better than substring matching", set.name)
		}
	}
}
