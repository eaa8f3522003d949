package lint

import (
	"fmt"
	"strings"

	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/internal/units"
)

// CatalogSkills is the agent size description-catalog-budget assumes: a
// catalog of this many skills, each described at this one's length. A
// catalog is shortened as a whole, so how much of a description survives
// depends on the skills beside it; twenty is a workspace's worth.
const CatalogSkills = 20

// description-catalog-budget renders the catalog at agent.CatalogWindows;
// the rule fires when the description is cut at FailWindow or above.

// FailWindow is the smallest window at which a cut description is a
// warning: today's common window. Cuts only in smaller windows are not
// reported.
const FailWindow = 128_000

func checkDescCatalog(s *skill) []Finding {
	d := s.description()
	if d == "" {
		return nil
	}
	files := make([]string, 0, s.pkg.Len())
	for _, e := range s.pkg.Entries() {
		files = append(files, e.Path)
	}
	skills := make([]agent.Skill, CatalogSkills)
	for i := range skills {
		skills[i] = agent.Skill{Name: s.parsed.Name, Description: d, Files: files}
	}
	var cut []string
	fails := false
	for _, w := range agent.CatalogWindows() {
		fit := agent.FitCatalog(skills, w, s.opts.Count)
		if fit.DescriptionCut == 0 {
			continue
		}
		how := fmt.Sprintf("to %d characters", fit.DescriptionCut)
		if fit.DescriptionCut < 0 {
			how = "out (names only)"
		}
		cut = append(cut, fmt.Sprintf("%s: cut %s", units.Window(w), how))
		fails = fails || w >= FailWindow
	}
	if !fails {
		return nil
	}
	return s.descFinding("description is %d tokens: in the catalog of a %d-skill agent (%.0f%% of the window) it would be cut at these windows: %s; put what selects the skill in the first 200 characters and shorten the rest",
		s.opts.Count(d), CatalogSkills, agent.DefaultCatalogShare*100, strings.Join(cut, "; "))
}
