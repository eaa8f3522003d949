package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/tool"
	"github.com/skilld/skilld/policy"
)

// offeredTool is a tool the model may call now, with its spec and size.
type offeredTool struct {
	tool   *tool.Tool
	spec   model.ToolSpec
	tokens int
	// skill is the Go skill the tool belongs to ("" for the run's own).
	skill string
}

// prepare settles what stays the same for the whole run, so a request
// costs no policy checks, rendering or tokenizing of it: the base tools the
// policy offers (control-flow tools always) with their specs, each Go
// skill's tool specs, and the system prompt: the instruction and, when
// activate_skill is offered, the catalog of the disclosed skills (or,
// when the install policy withholds every skill, a line saying which and
// why).
func (r *run) prepare(ctx context.Context) {
	r.base = nil
	for _, t := range r.tools {
		if o, ok := r.offer(t, ""); ok {
			r.base = append(r.base, o)
		}
	}
	r.skillTools = map[string][]offeredTool{}
	for _, gs := range r.cfg.GoSkills {
		for _, t := range gs.Tools {
			if o, ok := r.offer(t, gs.Name); ok {
				r.skillTools[gs.Name] = append(r.skillTools[gs.Name], o)
			}
		}
	}
	r.toolsChanged()
	r.system = r.cfg.Instruction
	if len(r.disclosed) == 0 {
		if len(r.withheld) > 0 {
			r.system = strings.TrimSpace(r.system + "\n\n" + withheldText(r.withheld))
		}
		r.systemTokens = r.count(r.system)
		return
	}
	c := r.cat
	if c.level > catalogFull {
		short, more := capped(shortenedAt(r.disclosed, c.level, c.listed))
		ev := CatalogShortened{Level: catalogLevelNames[c.level], Tokens: c.tokens, Budget: c.budget, OverBudget: c.tokens > c.budget,
			Skills: short, SkillsMore: more}
		if c.level == catalogSomeNames {
			ev.Listed, ev.Unlisted = c.listed, c.unlisted
		}
		r.emit(ctx, ev)
	}
	// When the policy denies activate_skill, the catalog goes with it.
	if r.baseOffers(ActivateSkill) {
		r.system = strings.TrimSpace(r.system + "\n\n" + c.text)
		r.catalog = &catalogFacts{level: c.level, tokens: c.tokens, budget: c.budget, listed: c.listed}
	}
	r.systemTokens = r.count(r.system)
}

// planCatalog renders the catalog of the disclosed skills, before the
// tools are made: at level some names, activate_skill loses its enum and
// search_skills is offered.
func (r *run) planCatalog() {
	budget := int(r.cfg.CatalogShare * float64(r.cfg.Window))
	searchable := !r.denied(ActivateSkill) && !r.denied(SearchSkills)
	r.cat = plannedCatalog{renderedCatalog: renderCatalog(r.disclosed, r.res.catalogIntro(), budget, r.count, r.task.ID, searchable), budget: budget}
}

// plannedCatalog is the catalog a run settled on, and its budget.
type plannedCatalog struct {
	renderedCatalog
	budget int
}

func (r *run) denied(tool string) bool { return r.cfg.Policy.Decide(tool).Decision == policy.Deny }

// withheldText tells the model which attached skills the install policy
// withholds, so that "no skills" is not a mystery to it or to whoever
// reads the transcript.
func withheldText(skills []Skill) string {
	var b strings.Builder
	b.WriteString("## Skills\n\nNo skill can be activated in this task: the workspace's install policy withholds every skill attached to this agent.\n")
	for _, s := range skills {
		fmt.Fprintf(&b, "- %s: withheld by %s\n", s.Name, s.Withheld)
	}
	return b.String()
}

// offer decides whether the policy lets the model see t, and sizes its
// spec once.
func (r *run) offer(t *tool.Tool, skill string) (offeredTool, bool) {
	if !controlFlow(t.Name) && r.cfg.Policy.Decide(t.Name).Decision == policy.Deny {
		return offeredTool{}, false
	}
	schema, _ := json.Marshal(t.Schema)
	spec := model.ToolSpec{Name: t.Name, Description: t.Description, Schema: schema}
	return offeredTool{tool: t, spec: spec, tokens: r.count(t.Name) + r.count(t.Description) + r.count(string(schema)), skill: skill}, true
}

func (r *run) baseOffers(name string) bool {
	return slices.ContainsFunc(r.base, func(o offeredTool) bool { return o.tool.Name == name })
}

// toolsChanged rebuilds what the model is offered after skills came or
// went: the base tools and the tools of every active Go skill, in the
// order they were activated.
func (r *run) toolsChanged() {
	r.offered = make(map[string]offeredTool, len(r.base))
	r.specs, r.toolTokens = r.specs[:0], 0
	add := func(o offeredTool) {
		r.offered[o.tool.Name] = o
		r.specs = append(r.specs, o.spec)
		r.toolTokens += o.tokens
	}
	for _, o := range r.base {
		add(o)
	}
	for _, name := range r.res.order() {
		for _, o := range r.skillTools[name] {
			add(o)
		}
	}
}

// knownTool reports whether a tool of that name exists in the run.
func (r *run) knownTool(name string) bool {
	if slices.ContainsFunc(r.tools, func(t *tool.Tool) bool { return t.Name == name }) {
		return true
	}
	for _, gs := range r.cfg.GoSkills {
		if slices.ContainsFunc(gs.Tools, func(t *tool.Tool) bool { return t.Name == name }) {
			return true
		}
	}
	return false
}

// effectiveWindow is the window less the share kept for the answer.
func (r *run) effectiveWindow() int {
	return int(float64(r.cfg.Window) * (1 - OutputReserve))
}

// request builds the next model request from the view (after windowing),
// the system prompt with <current_context>, and the offered tools. It
// returns the request's size in tokens as the tokenizer counts it;
// corrected turns that into the best estimate.
func (r *run) request() (*model.Request, int) {
	r.view.window(r.cfg.MaxMessages)
	system, tokens := r.system, r.systemTokens
	if cc, n := r.res.render(); cc != "" {
		// Counted apart and added, with the separator: a tokenizer never
		// needs more for the joined text than for its pieces.
		system = strings.TrimSpace(system + "\n\n" + cc)
		tokens += n + r.count("\n\n")
	}
	tokens += r.toolTokens + r.view.tokens
	req := &model.Request{Model: r.cfg.ModelName, System: system, MaxTokens: r.cfg.MaxTokens,
		Messages: r.view.messages(), Tools: slices.Clone(r.specs)}
	return req, tokens
}

// corrected scales an estimate up by how far the last estimate fell short
// of the prompt tokens the provider reported (Anthropic's tokenizer is not
// public, say). An estimate above the provider's count is kept as it is:
// erring on the large side keeps every request inside the window.
func (r *run) corrected(tokens int) int {
	if r.scale <= 1 {
		return tokens
	}
	return int(math.Ceil(float64(tokens) * r.scale))
}

// observe records the provider's count of a request estimated at
// estimate tokens (before correction), bounded so that one odd report
// cannot make the run blind.
func (r *run) observe(estimate, reported int) {
	if estimate <= 0 || reported <= 0 {
		return
	}
	r.scale = min(max(float64(reported)/float64(estimate), 0.5), 2)
}
