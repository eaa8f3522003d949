package analytics

import (
	"encoding/json"
	"strings"
	"unicode"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
)

// eventSkillsSearched is the type of the event a search_skills call
// writes; it is read by name, so that logs of builds without the tool
// still read.
const eventSkillsSearched = "skills.searched"

// maxReason caps the length of a refusal reason kind.
const maxReason = 200

// catalogState is what a run's catalog.trimmed (catalog.shortened in older
// logs) said.
type catalogState struct {
	level string
	// shortened names the skills the event said lost something, for a
	// level this build does not know.
	shortened map[string]bool
	// listed is set when the catalog listed only some names.
	listed map[string]bool
}

// Extract reads a task's log for what happened to each of skills, the
// skills of its snapshot: one TaskSkill each, in their order. Entries are
// the whole log, in order. A resumed run does not write what it replays
// again (only a task.resumed marker), and a compaction removes nothing
// from the log, so every entry counts once. A log that holds several runs
// (a task run again) is read to its end: counts add up, and the catalog
// and outcome are the last run's. Entries it cannot read are skipped.
func Extract(skills []Skill, entries []*skilld.TaskLogEntry) []TaskSkill {
	out := make([]TaskSkill, len(skills))
	byName := make(map[string]int, len(skills))
	for i, s := range skills {
		out[i] = TaskSkill{SkillID: s.ID, Name: s.Name, Version: s.Version, Digest: s.Digest, FirstIteration: -1, WithheldRule: s.Withheld}
		if _, dup := byName[s.Name]; !dup {
			byName[s.Name] = i
		}
	}
	var (
		cat       catalogState
		iteration int
		noCatalog bool // the tool policy denies activate_skill
		withheld  = map[string]string{}
		outcome   = OutcomeUnfinished
	)
	find := func(name string) (*TaskSkill, bool) {
		i, ok := byName[name]
		if !ok {
			return nil, false
		}
		return &out[i], true
	}
	for _, e := range entries {
		if e == nil || e.Kind != agent.KindEvent {
			continue
		}
		// The type first: most of a log's bytes are in events read here
		// for one field or not at all (a model call's context), which a
		// full decode would build for nothing.
		var head struct {
			Type      string          `json:"type"`
			Iteration json.RawMessage `json:"iteration"`
		}
		if json.Unmarshal(e.Payload, &head) != nil {
			continue
		}
		switch head.Type {
		case agent.EventLLMCallStarted:
			var n int
			json.Unmarshal(head.Iteration, &n)
			iteration = max(n, 0)
			continue
		case eventSkillsSearched:
			var r struct {
				Results []string `json:"results"`
			}
			json.Unmarshal(e.Payload, &r)
			for _, name := range r.Results {
				if t, ok := find(name); ok {
					t.Found++
				}
			}
			continue
		case agent.EventTaskStarted, agent.EventSkillWithheld, agent.EventCatalogTrimmed, agent.EventCatalogShortened, agent.EventSkillActivated,
			agent.EventSkillRefused, agent.EventSkillUnloaded, agent.EventTaskCompleted, agent.EventTaskFailed:
		default:
			continue
		}
		var ev agent.Event
		if json.Unmarshal(e.Payload, &ev) != nil {
			continue
		}
		switch p := ev.Payload.(type) {
		case agent.TaskStarted:
			cat, iteration = catalogState{}, 0
			noCatalog = false
			for _, name := range p.WithheldTools {
				noCatalog = noCatalog || name == agent.ActivateSkill
			}
		case agent.SkillWithheld:
			withheld[p.Skill] = p.Rule
		case agent.CatalogShortened:
			cat = catalogState{level: p.Level, shortened: set(p.Skills)}
			if len(p.Listed) > 0 || p.Unlisted > 0 {
				cat.listed = set(p.Listed)
			}
		case agent.SkillActivated:
			if t, ok := find(p.Skill); ok {
				t.Activations++
				if t.FirstIteration < 0 {
					t.FirstIteration = iteration
				}
			}
		case agent.SkillRefused:
			if t, ok := find(p.Skill); ok {
				t.Refusals++
				if t.RefusalReasons == nil {
					t.RefusalReasons = map[string]int{}
				}
				t.RefusalReasons[ReasonKind(p.Reason)]++
			}
		case agent.SkillUnloaded:
			if t, ok := find(p.Skill); ok {
				t.Unloads++
			}
		case agent.TaskCompleted:
			outcome = OutcomeCompleted
		case agent.TaskFailed:
			outcome = OutcomeFailed
			if p.Code == skilld.TaskCancelledCode {
				outcome = OutcomeCancelled
			}
		}
	}
	for i, s := range skills {
		t := &out[i]
		t.Outcome = outcome
		if rule, ok := withheld[s.Name]; ok && rule != "" {
			t.WithheldRule = rule
		}
		t.Offer = cat.offer(s.Skill, t.WithheldRule != "", noCatalog)
	}
	return out
}

// offer decides how the catalog offered s, by the runtime's own rules
// (agent.CatalogEntryAt) rather than the event's list of shortened
// skills, which is capped.
func (c catalogState) offer(s agent.Skill, withheld, noCatalog bool) string {
	switch {
	case withheld:
		return OfferWithheld
	case s.NoModelInvocation || noCatalog:
		return OfferHidden
	case c.listed != nil:
		if c.listed[s.Name] {
			return OfferNameOnly
		}
		return OfferUnlisted
	}
	entry, ok := agent.CatalogEntryAt(s, c.level)
	if !ok {
		entry = agent.CatalogEntryWhole
		if c.shortened[s.Name] {
			entry = agent.CatalogEntryShortened
		}
	}
	switch entry {
	case agent.CatalogEntryShortened:
		return OfferShortened
	case agent.CatalogEntryNameOnly:
		return OfferNameOnly
	}
	return OfferFull
}

func set(names []string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// ReasonKind is a refusal reason with its numbers replaced by N, so that
// refusals for the same cause count together ("it needs N tokens and only
// N of the N-token skills budget are left"), cut to 200 characters.
func ReasonKind(reason string) string {
	var b strings.Builder
	digits := false
	n := 0
	for _, r := range strings.TrimSpace(reason) {
		if n >= maxReason {
			break
		}
		if unicode.IsDigit(r) {
			if !digits {
				b.WriteByte('N')
				n++
			}
			digits = true
			continue
		}
		digits = false
		b.WriteRune(r)
		n++
	}
	return b.String()
}
