package agent_test

import (
	"strings"
	"testing"

	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/tokenizer"
)

// TestFitCatalog: FitCatalog says what a run would do with a catalog: a
// small one is whole at any window, and a long description is cut in
// small windows, to 200 characters and then to 60, as the window shrinks.
func TestFitCatalog(t *testing.T) {
	tok, err := tokenizer.NewCache().Get(tokenizer.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	one := []agent.Skill{{Name: "csv", Description: "Summarize a CSV file. Use when a task hands you a .csv file.", Files: []string{"SKILL.md", "scripts/s.sh"}}}
	if f := agent.FitCatalog(one, 128_000, tok.Count); f.Level != "full" || f.DescriptionCut != 0 || f.Budget != 2560 || f.Tokens > f.Budget {
		t.Errorf("one short skill at 128k: %+v", f)
	}
	long := strings.Repeat("Export Markdown tables to CSV, TSV and JSON Lines files. ", 16)
	var many []agent.Skill
	for range 20 {
		many = append(many, agent.Skill{Name: "tables", Description: long})
	}
	for _, tc := range []struct{ window, cut int }{{1_000_000, 0}, {128_000, 200}, {32_000, 60}, {4_000, -1}} {
		if f := agent.FitCatalog(many, tc.window, tok.Count); f.DescriptionCut != tc.cut || f.Window != tc.window || f.Budget != tc.window/50 {
			t.Errorf("at %d: %+v, want descriptions cut to %d", tc.window, f, tc.cut)
		}
	}
}
