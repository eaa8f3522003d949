package lint_test

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/skilld/skilld/agent/tokenizer"
	"github.com/skilld/skilld/lint"
	"github.com/skilld/skilld/pack"
)

// count is the runtime's default token count (o200k_base).
func count(t testing.TB) func(string) int {
	t.Helper()
	tok, err := tokenizer.NewCache().Get(tokenizer.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	return tok.Count
}

// lintDir lints the skill folder dir, whose name the skill's must match.
func lintDir(t testing.TB, dir string, count func(string) int) lint.Report {
	t.Helper()
	p, err := pack.ReadDir(t.Context(), dir, pack.ArchiveLimits())
	if err != nil {
		t.Fatal(err)
	}
	r, err := lint.Check(t.Context(), p, lint.Options{Dir: filepath.Base(dir), Count: count})
	if err != nil {
		t.Fatal(err)
	}
	r.Path = dir
	return r
}

// badFixtures says, for each rule, where its fixture's first finding is
// and which other rules may fire on it too.
var badFixtures = map[string]struct {
	at   string // FILE:LINE of the rule's first finding
	also []string
}{
	"skill-invalid":                {at: "SKILL.md:0"},
	"name-folder-mismatch":         {at: "SKILL.md:2"},
	"description-short":            {at: "SKILL.md:3", also: []string{"description-vague", "description-no-trigger"}},
	"description-vague":            {at: "SKILL.md:3"},
	"description-no-trigger":       {at: "SKILL.md:3"},
	"description-placeholder":      {at: "SKILL.md:3"},
	"description-catalog-budget":   {at: "SKILL.md:3"},
	"body-too-long":                {at: "SKILL.md:5"},
	"reference-broken":             {at: "SKILL.md:8"},
	"reference-depth":              {at: "references/format.md:3"},
	"unreferenced-file":            {at: "data/:0"},
	"script-shebang":               {at: "scripts/export.sh:1"},
	"script-not-executable":        {at: "scripts/export.sh:0"},
	"claude-arguments":             {at: "SKILL.md:8"},
	"claude-command-preprocessing": {at: "SKILL.md:10"},
}

// TestRulesFireOnBadFixtures: every rule has a fixture in testdata/bad
// named for it, fires there at the file and line expected, and nothing
// else fires there but the rules listed.
func TestRulesFireOnBadFixtures(t *testing.T) {
	c := count(t)
	for _, rule := range lint.Rules() {
		t.Run(rule.ID, func(t *testing.T) {
			want, ok := badFixtures[rule.ID]
			if !ok {
				t.Fatalf("no fixture for rule %s", rule.ID)
			}
			r := lintDir(t, filepath.Join("testdata", "bad", rule.ID), c)
			i := slices.IndexFunc(r.Findings, func(f lint.Finding) bool { return f.Rule == rule.ID })
			if i < 0 {
				t.Fatalf("%s did not fire: %+v", rule.ID, r.Findings)
			}
			f := r.Findings[i]
			if got := f.File + ":" + strconv.Itoa(f.Line); got != want.at || f.Severity != rule.Severity || f.Message == "" {
				t.Errorf("finding %+v: want at %s with severity %s", f, want.at, rule.Severity)
			}
			for _, f := range r.Findings {
				if f.Rule != rule.ID && !slices.Contains(want.also, f.Rule) {
					t.Errorf("the fixture of %s also has %+v", rule.ID, f)
				}
			}
			if lint.Failing(r.Findings) != (rule.Severity != lint.Info) {
				t.Errorf("Failing = %v for a %s finding", lint.Failing(r.Findings), rule.Severity)
			}
		})
	}
}

// TestGoodFixturesClean: the skills of testdata/good (a script with a #!
// line and the executable bit, one run by an interpreter, a module only
// imported, a linked reference, a folder mentioned as a whole, a license)
// have no finding.
func TestGoodFixturesClean(t *testing.T) {
	c := count(t)
	dirs, err := os.ReadDir(filepath.Join("testdata", "good"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no good fixtures: %v", err)
	}
	for _, d := range dirs {
		r := lintDir(t, filepath.Join("testdata", "good", d.Name()), c)
		if len(r.Findings) != 0 || r.Name != d.Name() {
			t.Errorf("%s: name %q, findings %+v", d.Name(), r.Name, r.Findings)
		}
	}
}
