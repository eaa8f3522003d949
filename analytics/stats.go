package analytics

import (
	"cmp"
	"slices"

	"github.com/skilld/skilld/store"
)

// Outcomes counts tasks by how they ended.
type Outcomes struct {
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
	Cancelled int `json:"cancelled"`
}

// Counts sums what tasks did with a skill. Offers count tasks (a task
// offers a skill once); activations, refusals and unloads count events.
type Counts struct {
	// Tasks counts the tasks the skill was attached to.
	Tasks int `json:"tasks"`
	// Offered counts the tasks whose catalog listed it:
	// OfferedFull + OfferedShortened + OfferedNameOnly.
	Offered          int `json:"offered"`
	OfferedFull      int `json:"offered_full"`
	OfferedShortened int `json:"offered_shortened"`
	OfferedNameOnly  int `json:"offered_name_only"`
	// Unlisted counts the tasks whose catalog could not list every name
	// and left it out; Hidden those that did not offer it to the model
	// (user-invocable only, or activate_skill denied); Withheld those
	// whose install policy kept it out, by rule in WithheldRules.
	Unlisted      int            `json:"unlisted"`
	Hidden        int            `json:"hidden"`
	Withheld      int            `json:"withheld"`
	WithheldRules map[string]int `json:"withheld_rules"`
	// Activations counts activations; TasksActivated the tasks with at
	// least one. FirstIteration is the mean model call whose answer first
	// activated it in those tasks (0: the user's "/name", before any
	// call); null when none did.
	Activations    int      `json:"activations"`
	TasksActivated int      `json:"tasks_activated"`
	FirstIteration *float64 `json:"first_iteration"`
	// Refusals counts refused activations, by reason in RefusalReasons
	// (its numbers replaced by N).
	Refusals       int            `json:"refusals"`
	RefusalReasons map[string]int `json:"refusal_reasons"`
	Unloads        int            `json:"unloads"`
	// Found counts the search_skills results that named it.
	Found int `json:"found"`
	// Outcomes are those of the tasks that activated it.
	Outcomes Outcomes `json:"outcomes"`

	firstIterations int
}

// VersionStats are the counts of the tasks that ran one version.
type VersionStats struct {
	Version int    `json:"version"`
	Digest  string `json:"digest"`
	Counts
}

// SkillStats are a skill's counts, in all and per version (newest
// first).
type SkillStats struct {
	Name    string `json:"name"`
	SkillID string `json:"skill_id"`
	Counts
	// OfferedNeverActivated is set when tasks offered the skill and none
	// activated it: its description may not say when to use it.
	OfferedNeverActivated bool           `json:"offered_never_activated"`
	Versions              []VersionStats `json:"versions"`
}

// SkillRef names a skill to report on.
type SkillRef struct{ ID, Name string }

// Summarize sums groups (store.SkillUsageGroup) per skill of skills, in
// their order, each listed even when no group names it (all zeros);
// groups of other skills are left out.
func Summarize(skills []SkillRef, groups []store.SkillUsageGroup) []SkillStats {
	out := make([]SkillStats, len(skills))
	index := make(map[string]int, len(skills))
	for i, s := range skills {
		out[i] = SkillStats{Name: s.Name, SkillID: s.ID, Counts: newCounts(), Versions: []VersionStats{}}
		index[s.ID] = i
	}
	for _, g := range groups {
		i, ok := index[g.SkillID]
		if !ok {
			continue
		}
		st := &out[i]
		st.add(g)
		v := slices.IndexFunc(st.Versions, func(v VersionStats) bool { return v.Version == g.Version && v.Digest == g.Digest })
		if v < 0 {
			st.Versions = append(st.Versions, VersionStats{Version: g.Version, Digest: g.Digest, Counts: newCounts()})
			v = len(st.Versions) - 1
		}
		st.Versions[v].add(g)
	}
	for i := range out {
		st := &out[i]
		st.finish()
		for v := range st.Versions {
			st.Versions[v].finish()
		}
		slices.SortFunc(st.Versions, func(a, b VersionStats) int {
			return cmp.Or(cmp.Compare(b.Version, a.Version), cmp.Compare(a.Digest, b.Digest))
		})
		st.OfferedNeverActivated = st.Offered > 0 && st.TasksActivated == 0
	}
	return out
}

func newCounts() Counts {
	return Counts{WithheldRules: map[string]int{}, RefusalReasons: map[string]int{}}
}

func (c *Counts) add(g store.SkillUsageGroup) {
	c.Tasks += g.Tasks
	switch g.Offer {
	case OfferFull:
		c.OfferedFull += g.Tasks
	case OfferShortened:
		c.OfferedShortened += g.Tasks
	case OfferNameOnly:
		c.OfferedNameOnly += g.Tasks
	case OfferUnlisted:
		c.Unlisted += g.Tasks
	case OfferHidden:
		c.Hidden += g.Tasks
	case OfferWithheld:
		c.Withheld += g.Tasks
		c.WithheldRules[g.WithheldRule] += g.Tasks
	}
	if Offered(g.Offer) {
		c.Offered += g.Tasks
	}
	c.Activations += g.Activations
	c.TasksActivated += g.TasksActivated
	c.firstIterations += g.FirstIterations
	c.Refusals += g.Refusals
	for r, n := range g.RefusalReasons {
		c.RefusalReasons[r] += n
	}
	c.Unloads += g.Unloads
	c.Found += g.Found
	switch g.Outcome {
	case OutcomeCompleted:
		c.Outcomes.Completed += g.TasksActivated
	case OutcomeFailed:
		c.Outcomes.Failed += g.TasksActivated
	case OutcomeCancelled:
		c.Outcomes.Cancelled += g.TasksActivated
	}
}

func (c *Counts) finish() {
	if c.TasksActivated > 0 {
		mean := float64(c.firstIterations) / float64(c.TasksActivated)
		c.FirstIteration = &mean
	}
}
