package skillsearch_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/skilld/skilld/skillsearch"
)

var sample = []skillsearch.Skill{
	{Name: "pdf-processing", Description: "Extract text and tables from PDF files, fill forms, merge documents.", Headings: []string{"Quick start", "Merging PDFs"}},
	{Name: "csv-inspector", Description: "Summarize a CSV file: columns, types, missing values.", Headings: []string{"Usage"}},
	{Name: "release-notes", Description: "Write release notes from the commits since the last tag.", Headings: []string{"Changelog format"}},
	{Name: "kubernetes-deploy", Description: "Deploy services to a cluster with manifests and rollouts.", Headings: []string{"Rollback"}},
	{Name: "webapp-testing", Description: "Test local web applications with Playwright: screenshots, browser logs.", Headings: []string{"Formatting results"}},
}

func names(hits []skillsearch.Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, sample[h.Index].Name)
	}
	return out
}

// TestSearch: a query finds skills by their description's words, by a
// heading, across word forms (stemming), by a word's beginning, and by
// the name; nothing matches a query of unknown or empty words.
func TestSearch(t *testing.T) {
	ix := skillsearch.New(sample)
	if ix.Len() != len(sample) {
		t.Fatalf("Len = %d", ix.Len())
	}
	for _, tc := range []struct{ query, first string }{
		{"merge two pdf documents", "pdf-processing"},
		{"what columns does this spreadsheet csv have", "csv-inspector"},
		{"a changelog for the new version", "release-notes"},
		{"rolling back a deployment", "kubernetes-deploy"}, // rollback? no: deploy stems; heading Rollback
		{"take a screenshot of my web app", "webapp-testing"},
		{"format the results", "webapp-testing"},
		{"kube", "kubernetes-deploy"}, // a prefix
		{"release notes", "release-notes"},
		{"ReleaseNotes", "release-notes"}, // camelCase
	} {
		hits := ix.Search(tc.query, 3)
		if len(hits) == 0 || sample[hits[0].Index].Name != tc.first {
			t.Errorf("%q: %v, want %s first", tc.query, names(hits), tc.first)
		}
		for i := 1; i < len(hits); i++ {
			if hits[i].Score > hits[i-1].Score {
				t.Errorf("%q: hits out of order: %v", tc.query, hits)
			}
		}
	}
	for _, q := range []string{"", "the and of", "zzzqqq", "!!!"} {
		if hits := ix.Search(q, 5); len(hits) != 0 {
			t.Errorf("%q matched %v", q, names(hits))
		}
	}
	if hits := ix.Search("pdf", 0); hits != nil {
		t.Errorf("k=0: %v", hits)
	}
	if got := ix.Search("file", 1); len(got) != 1 {
		t.Errorf("k=1: %v", names(got))
	}
	if hits := skillsearch.New(nil).Search("pdf", 3); hits != nil {
		t.Errorf("empty index: %v", hits)
	}
}

// TestSearchTies: equal scores go to the skill given first, so a search
// answers the same every time.
func TestSearchTies(t *testing.T) {
	same := []skillsearch.Skill{{Name: "b-one", Description: "lint code"}, {Name: "a-two", Description: "lint code"}, {Name: "c-three", Description: "lint code"}}
	ix := skillsearch.New(same)
	for range 20 {
		hits := ix.Search("lint", 3)
		if len(hits) != 3 || hits[0].Index != 0 || hits[1].Index != 1 || hits[2].Index != 2 {
			t.Fatalf("ties: %v", hits)
		}
	}
}

// TestSubstring: the floor matches query words inside names and
// descriptions, most words first.
func TestSubstring(t *testing.T) {
	hits := skillsearch.Substring(sample, "merge pdf tables", 2)
	if got := names(hits); !slices.Equal(got, []string{"pdf-processing"}) {
		t.Errorf("got %v", got)
	}
	if hits := skillsearch.Substring(sample, "a b", 2); hits != nil {
		t.Errorf("short words matched %v", hits)
	}
}

// TestTokens: the normalization both sides of a match go through.
func TestTokens(t *testing.T) {
	for in, want := range map[string][]string{
		"Formatting formats FORMATTED format": {"format", "format", "format", "format"},
		"generate generation generating":      {"generat", "generat", "generat"},
		"pdf-processing, csvInspector":        {"pdf", "process", "csv", "inspector"},
		"Use this skill when the user asks":   {"user", "ask"},
		"libraries libraries v2 3":            {"library", "library", "v2", "3"},
		"naïve Übersetzung 翻訳":                {"naïve", "übersetzung", "翻訳"},
	} {
		if got := skillsearch.Tokens(in); !slices.Equal(got, want) {
			t.Errorf("Tokens(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestHeadings: ATX headings of the body, not of the frontmatter or code.
func TestHeadings(t *testing.T) {
	md := "---\nname: x\ndescription: '# not a heading'\n---\n# Title\ntext\n## Usage ##\n```bash\n# a comment\n```\n    # indented code\n###NoSpace\n####### seven\n~~~\n# in tilde fence\n~~~\n### Last #\n#\n"
	want := []string{"Title", "Usage", "Last"}
	if got := skillsearch.Headings([]byte(md)); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	var many []byte
	for i := range 100 {
		many = fmt.Appendf(many, "## h%d\n", i)
	}
	if got := skillsearch.Headings(many); len(got) != skillsearch.MaxHeadings {
		t.Errorf("%d headings kept", len(got))
	}
}

// TestCache: the same skills share an index; other skills get theirs;
// concurrent first searches build it once.
func TestCache(t *testing.T) {
	var c skillsearch.Cache
	var wg sync.WaitGroup
	got := make([]*skillsearch.Index, 8)
	for i := range got {
		wg.Go(func() { got[i] = c.Index(slices.Clone(sample)) })
	}
	wg.Wait()
	for _, ix := range got {
		if ix != got[0] {
			t.Fatal("the same skills got two indexes")
		}
	}
	other := slices.Clone(sample)
	other[0].Headings = []string{"Quick start", "Merging"}
	if c.Index(other) == got[0] || c.Builds() != 2 {
		t.Errorf("other headings share an index (builds %d)", c.Builds())
	}
	for i := range 10 {
		c.Index([]skillsearch.Skill{{Name: fmt.Sprint("s", i)}})
	}
	if c.Index(sample) == got[0] {
		t.Error("the least recently used index was not dropped")
	}
	var none *skillsearch.Cache
	if none.Index(sample).Len() != len(sample) {
		t.Error("a nil cache builds")
	}
	ab := c.Index([]skillsearch.Skill{{Name: "ab"}})
	if c.Index([]skillsearch.Skill{{Name: "a", Description: "b"}}) == ab {
		t.Error("keys collide")
	}
}
