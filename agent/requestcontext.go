package agent

import (
	"cmp"
	"slices"

	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/placement"
)

// A model request is built from state that changes as the run goes: the
// view after windowing and compaction, the loaded or activated skills, the
// tools offered now. Someone asking "why did the model not use my skill"
// needs that state as it was at each request, and the task log otherwise
// only has it implicitly (replaying the events in their head). So every
// llm.call.started event carries a RequestContext: a bounded summary of
// what the request held — names, sizes and counts, never message contents
// or SKILL.md text.

// maxListed caps every list of names in a RequestContext, so an event stays
// small whatever the run holds; what is not listed is counted.
const maxListed = 200

// maxLeftOutRanges caps the ranges of left-out log sequence numbers listed
// (the newest are kept: they are the ones a reader looks for first).
const maxLeftOutRanges = 100

// RequestContext is the context of one model request as the model saw it:
// the llm.call.started event's "context" field. A live event holds it as a
// RequestContext; an event read back from the task log (EventOf) holds its
// JSON decoded into maps, which unmarshals into a RequestContext again.
type RequestContext struct {
	// Window is the context window; Budget the effective window (less the
	// share kept for the answer), which no request exceeds.
	Window int `json:"window"`
	Budget int `json:"budget"`
	// EstimatedTokens is the request's estimated size, corrected by what
	// the provider reported of earlier requests (as the event's
	// estimated_tokens); Tokens splits the uncorrected count.
	EstimatedTokens int           `json:"estimated_tokens"`
	Tokens          RequestTokens `json:"tokens"`
	Placement       string        `json:"placement"`
	// Catalog is absent when the request has no catalog (no skill is
	// disclosed, or the tool policy denies activate_skill).
	Catalog *RequestCatalog `json:"catalog,omitempty"`
	// Withheld names the attached skills the install policy withholds:
	// they are in no catalog.
	Withheld     []string `json:"withheld,omitempty"`
	WithheldMore int      `json:"withheld_more,omitempty"`
	// Skills are the skills whose instructions the request carries: the
	// activations in the messages sent (transcript placement) or the
	// skills loaded into <current_context>, least recently used first
	// (context placement).
	Skills     []RequestSkill `json:"skills"`
	SkillsMore int            `json:"skills_more,omitempty"`
	// Tools names the tools offered, in the request's order.
	Tools     []string        `json:"tools"`
	ToolsMore int             `json:"tools_more,omitempty"`
	Messages  RequestMessages `json:"messages"`
}

// RequestTokens splits a request's size as the run's tokenizer counts it.
type RequestTokens struct {
	// System is the instruction with the catalog; CurrentContext the
	// <current_context> section (context placement).
	System         int `json:"system"`
	CurrentContext int `json:"current_context"`
	Tools          int `json:"tools"`
	Messages       int `json:"messages"`
}

// RequestCatalog is the catalog block of the system prompt.
type RequestCatalog struct {
	// Level is the detail it was rendered at (catalog.trimmed's levels:
	// "full", "no file lists", …, "names only").
	Level  string `json:"level"`
	Tokens int    `json:"tokens"`
	Budget int    `json:"budget"`
	// Skills names the skills listed, in the catalog's order.
	Skills     []string `json:"skills"`
	SkillsMore int      `json:"skills_more,omitempty"`
}

// RequestSkill is one skill whose instructions the request carries.
type RequestSkill struct {
	Name   string `json:"name"`
	Tokens int    `json:"tokens"`
	// Placement is "transcript" (its activation's result is among the
	// messages) or "context" (it is loaded into <current_context>).
	Placement string `json:"placement"`
	// Active marks the active skill in context placement (the most
	// recently used).
	Active bool `json:"active,omitempty"`
}

// RequestMessages says which of the task's messages the request carries.
type RequestMessages struct {
	// Sent is how many messages the request carries (a summary counted);
	// Cap is the max_messages cap (0: none).
	Sent int `json:"sent"`
	Cap  int `json:"cap"`
	// LeftOut is how many of the task log's messages the request does not
	// carry: Windowed of them left the window, Compacted were summarized
	// (or replaced by a marker when the summary failed).
	LeftOut   int `json:"left_out"`
	Windowed  int `json:"windowed"`
	Compacted int `json:"compacted"`
	// LeftOutSeqs are ranges [first, last] of task log sequence numbers:
	// every message whose seq falls in one was left out (events between
	// them are not messages). The newest maxLeftOutRanges are listed;
	// LeftOutSeqsMore counts the older ones.
	LeftOutSeqs     [][2]int64 `json:"left_out_seqs"`
	LeftOutSeqsMore int        `json:"left_out_seqs_more,omitempty"`
	// Summarized is set when a compaction's summary (or the marker of a
	// failed one) stands in for older messages.
	Summarized bool `json:"summarized"`
}

// leftOut is what windowing and compaction took out of the view for good:
// ranges of log seqs (ascending, disjoint, never adjacent across a message
// still in the view) and counts by cause.
type leftOut struct {
	ranges              [][2]int64
	windowed, compacted int
}

// requestFacts is what the request builder knows when it has planned a
// request; describeRequest turns it into a RequestContext.
type requestFacts struct {
	window, budget, estimated int
	tokens                    RequestTokens
	placement                 string
	maxMessages               int
	// catalog is nil when the system prompt has no catalog; listed are the
	// skills it lists.
	catalog  *catalogFacts
	listed   []string
	withheld []string
	entries  []entry
	left     leftOut
	// loaded are the skills in <current_context> (context placement),
	// least recently used first: the last is the active one.
	loaded []placement.Item
	tools  []model.ToolSpec
}

// catalogFacts is how prepare rendered the catalog.
type catalogFacts struct {
	level, tokens, budget int
	listed                []string
}

// describeRequest summarizes a planned request. It is pure: it reads only
// f, and never copies message contents or skill text.
func describeRequest(f requestFacts) RequestContext {
	rc := RequestContext{Window: f.window, Budget: f.budget, EstimatedTokens: f.estimated, Tokens: f.tokens, Placement: f.placement,
		Skills: []RequestSkill{}}
	if f.catalog != nil {
		c := &RequestCatalog{Level: catalogLevelNames[f.catalog.level], Tokens: f.catalog.tokens, Budget: f.catalog.budget}
		c.Skills, c.SkillsMore = capped(f.listed)
		rc.Catalog = c
	}
	rc.Withheld, rc.WithheldMore = capped(f.withheld)
	if len(rc.Withheld) == 0 {
		rc.Withheld = nil
	}
	var skills []RequestSkill
	for _, it := range f.loaded {
		skills = append(skills, RequestSkill{Name: it.Name, Tokens: it.Tokens, Placement: PlacementContext})
	}
	if len(skills) > 0 {
		skills[len(skills)-1].Active = true
	}
	m := RequestMessages{Sent: len(f.entries), Cap: max(f.maxMessages, 0), LeftOutSeqs: [][2]int64{},
		Windowed: f.left.windowed, Compacted: f.left.compacted, LeftOut: f.left.windowed + f.left.compacted}
	for _, e := range f.entries {
		if e.skill != "" {
			skills = append(skills, RequestSkill{Name: e.skill, Tokens: e.tokens, Placement: PlacementTranscript})
		}
		m.Summarized = m.Summarized || e.summary
	}
	if len(skills) > maxListed {
		rc.SkillsMore = len(skills) - maxListed
		skills = skills[:maxListed]
	}
	if skills != nil {
		rc.Skills = skills
	}
	names := make([]string, len(f.tools))
	for i, t := range f.tools {
		names[i] = t.Name
	}
	rc.Tools, rc.ToolsMore = capped(names)
	ranges := f.left.ranges
	if len(ranges) > maxLeftOutRanges {
		m.LeftOutSeqsMore = len(ranges) - maxLeftOutRanges
		ranges = ranges[len(ranges)-maxLeftOutRanges:]
	}
	m.LeftOutSeqs = append(m.LeftOutSeqs, ranges...)
	rc.Messages = m
	return rc
}

// capped returns at most maxListed names (never nil) and how many more
// there are.
func capped(names []string) ([]string, int) {
	if len(names) > maxListed {
		return slices.Clone(names[:maxListed]), len(names) - maxListed
	}
	return append([]string{}, names...), 0
}

// leave records messages that left the view for good: dropped are the
// entries that left, in transcript order, with a nil entry between two
// that were not next to each other (something stayed between them); kept
// are the seqs of the messages still in the view, ascending. A summary
// has no seq (it is not a log message) and is not counted.
func (l *leftOut) leave(dropped []*entry, kept []int64, compacted bool) {
	var runs [][2]int64
	open := false
	for _, e := range dropped {
		switch {
		case e == nil:
			open = false
		case e.seq == 0:
		case open:
			runs[len(runs)-1][1] = e.seq
		default:
			runs, open = append(runs, [2]int64{e.seq, e.seq}), true
		}
		if e != nil && e.seq != 0 {
			if compacted {
				l.compacted++
			} else {
				l.windowed++
			}
		}
	}
	l.ranges = mergeRanges(append(l.ranges, runs...), kept)
}

// mergeRanges sorts ranges of left-out seqs and joins two neighbours when
// no message still sent (kept, ascending) lies between them: every
// message between them was left out too, so one range says it.
func mergeRanges(ranges [][2]int64, kept []int64) [][2]int64 {
	slices.SortFunc(ranges, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
	var out [][2]int64
	for _, r := range ranges {
		if n := len(out); n > 0 {
			// The first kept seq after the previous range.
			i, _ := slices.BinarySearch(kept, out[n-1][1]+1)
			if i == len(kept) || kept[i] > r[0] {
				out[n-1][1] = max(out[n-1][1], r[1])
				continue
			}
		}
		out = append(out, r)
	}
	return out
}

// requestContext gathers, after request planned one, what describeRequest
// needs. raw is the request's uncorrected size.
func (r *run) requestContext(req *model.Request, raw int) RequestContext {
	f := requestFacts{window: r.cfg.Window, budget: r.effectiveWindow(), estimated: r.corrected(raw), placement: r.cfg.Placement,
		maxMessages: r.cfg.MaxMessages, catalog: r.catalog, entries: r.view.entries, left: r.view.left, tools: req.Tools,
		tokens: RequestTokens{System: r.systemTokens, Tools: r.toolTokens, Messages: r.view.tokens}}
	// request adds <current_context> (and its separator) to the rest.
	f.tokens.CurrentContext = raw - r.systemTokens - r.toolTokens - r.view.tokens
	if r.catalog != nil {
		f.listed = r.catalog.listed
	}
	for _, s := range r.withheld {
		f.withheld = append(f.withheld, s.Name)
	}
	f.loaded = r.res.loaded()
	return describeRequest(f)
}
