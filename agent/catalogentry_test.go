package agent_test

import (
	"strings"
	"testing"

	"github.com/skilld/skilld/agent"
)

// TestCatalogEntryAt: an entry loses its file list once files are left
// out, its description past each level's cut, everything but its name at
// "names only"; an unknown level is not guessed.
func TestCatalogEntryAt(t *testing.T) {
	short := agent.Skill{Name: "a", Description: "Short."}
	files := agent.Skill{Name: "b", Description: "Short.", Files: []string{"SKILL.md", "x.sh"}}
	mid := agent.Skill{Name: "c", Description: strings.Repeat("word ", 30)} // 149 characters once spaces fold
	for _, c := range []struct {
		skill agent.Skill
		level string
		want  agent.CatalogEntry
	}{
		{files, "", agent.CatalogEntryWhole},
		{files, "full", agent.CatalogEntryWhole},
		{files, "no file lists", agent.CatalogEntryShortened},
		{short, "no file lists", agent.CatalogEntryWhole},
		{mid, "descriptions shortened to 200 characters", agent.CatalogEntryWhole},
		{mid, "descriptions shortened to 60 characters", agent.CatalogEntryShortened},
		{short, "descriptions shortened to 60 characters", agent.CatalogEntryWhole},
		{short, "names only", agent.CatalogEntryNameOnly},
	} {
		if got, ok := agent.CatalogEntryAt(c.skill, c.level); !ok || got != c.want {
			t.Errorf("%s at %q: %v %v, want %v", c.skill.Name, c.level, got, ok, c.want)
		}
	}
	if _, ok := agent.CatalogEntryAt(short, "some other level"); ok {
		t.Error("an unknown level was read")
	}
}
