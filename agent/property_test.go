package agent_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/tool"
	"github.com/skilld/skilld/policy"
)

// TestContextInvariants runs thousands of random scripted tasks (random
// earlier turns, tool calls with random output sizes, activations of
// random skills, Go skills with tools, unloads, both placements, both
// history strategies, tiny windows) and checks every request the runtime
// sends:
//
//   - it fits the effective window;
//   - no tool result without its call, no call without its result, and it
//     starts with a user message;
//   - in transcript placement every activation is there verbatim with its
//     call; in context placement every loaded skill is rendered, and at
//     most max_loaded are;
//   - the tools offered are the run's own, the control-flow ones and the
//     active Go skills' tools, less the denied, and search_skills exactly
//     when the catalog does not list every disclosed skill, whose
//     activate_skill then has no enum;
//   - the catalog lists every disclosed skill once, or some of them and
//     counts the rest; search_skills returns disclosed skills only;
//   - with a message cap, the unpinned messages respect it;
//   - the llm.call.started event's context says what the request holds:
//     its messages are the log's less the left-out seqs (plus a summary),
//     its tools and skills are the request's.
//
// SKILLD_PROPERTY_TASKS sets how many (default 10,000); a failure names
// its seed, and SKILLD_PROPERTY_SEED replays one.
func TestContextInvariants(t *testing.T) {
	n := 10000
	if v, err := strconv.Atoi(os.Getenv("SKILLD_PROPERTY_TASKS")); err == nil {
		n = v
	}
	first := uint64(1)
	if v, err := strconv.ParseUint(os.Getenv("SKILLD_PROPERTY_SEED"), 10, 64); err == nil {
		first, n = v, 1
	}
	// Chunks run in parallel; each stops after a few failures.
	const chunks = 8
	for c := range uint64(chunks) {
		t.Run(fmt.Sprint("chunk", c), func(t *testing.T) {
			t.Parallel()
			failed := 0
			for seed := first + c; seed < first+uint64(n) && failed < 3; seed += chunks {
				if err := randomTask(t, seed); err != nil {
					failed++
					t.Errorf("seed %d (replay with SKILLD_PROPERTY_SEED=%d): %v", seed, seed, err)
				}
			}
		})
	}
}

// propTask is one random task and what the test knows of its state.
type propTask struct {
	rng      *rand.Rand
	cfg      agent.Config
	goTools  map[string]string // tool → Go skill
	active   map[string]bool   // skills active now (activated or loaded)
	loaded   []string          // context placement, least recently used first
	contents map[string]string // transcript placement: activation results
	turns    int
	maxTurns int
	err      error
	// messages are the message events so far; request the context the
	// last llm.call.started says the next request has.
	messages []agent.Event
	request  *agent.RequestContext
	// unlisted is set when the catalog lists only some names.
	unlisted bool
}

func (p *propTask) fail(format string, args ...any) {
	if p.err == nil {
		p.err = fmt.Errorf(format, args...)
	}
}

func randomTask(t *testing.T, seed uint64) error {
	p, cfg, history := randomSetup(t, seed)
	a, err := agent.New(cfg)
	if err != nil {
		return fmt.Errorf("New: %w", err)
	}
	var last agent.Event
	for ev, err := range a.Run(context.Background(), agent.Task{ID: "t", Input: "Do the task.", History: history}) {
		if err != nil {
			return fmt.Errorf("run: %w", err)
		}
		p.observe(ev)
		last = ev
	}
	if p.err != nil {
		return p.err
	}
	switch {
	case last.Type == agent.EventTaskCompleted:
	case last.Type == agent.EventTaskFailed && strings.Contains(last.Payload.(agent.TaskFailed).Error, "more than the effective window"):
		// A tiny window that cannot hold what must stay: refused before
		// the call, which is the rule.
	default:
		return fmt.Errorf("the task ended with %s %v", last.Type, last.Payload)
	}
	return nil
}

// randomSetup makes the random agent configuration, model and earlier
// turns of a seed.
func randomSetup(t *testing.T, seed uint64) (*propTask, agent.Config, []model.Message) {
	rng := rand.New(rand.NewPCG(seed, seed*7919))
	p := &propTask{rng: rng, goTools: map[string]string{}, active: map[string]bool{}, contents: map[string]string{}, maxTurns: 3 + rng.IntN(14)}
	pkgs := &agent.MemoryPackages{}
	cfg := agent.Config{Window: 1500 + rng.IntN(12000), Tokenizer: runeCounter{}, Packages: pkgs, Tools: []*tool.Tool{emitTool(t)}}
	if rng.IntN(2) == 0 {
		cfg.Placement = agent.PlacementContext
		cfg.MaxLoaded = 1 + rng.IntN(3)
	}
	switch rng.IntN(4) {
	case 0:
		cfg.MaxMessages = -1
	case 1:
		cfg.MaxMessages = 2 + rng.IntN(20)
	}
	cfg.NoCompaction = rng.IntN(5) == 0
	for i := range rng.IntN(6) {
		sk := bigSkill(t, pkgs, fmt.Sprintf("pkg-%d", i), 5+rng.IntN(cfg.Window/8))
		if rng.IntN(6) == 0 {
			sk.Withheld = "install policy rule 1 (deny registry \"x\")"
		}
		cfg.Skills = append(cfg.Skills, sk)
	}
	for i := range rng.IntN(3) {
		gs := randomGoSkill(t, fmt.Sprintf("go-%d", i), rng.IntN(cfg.Window/10+1))
		for _, tl := range gs.Tools {
			p.goTools[tl.Name] = gs.Name
		}
		cfg.GoSkills = append(cfg.GoSkills, gs)
	}
	if rng.IntN(4) == 0 {
		cfg.Policy = policy.Merge(policy.Level{Name: "agent", Policy: skilld.ToolPolicy{Denied: []string{"go-0_*"}}})
	}
	cfg.Model = modelFunc(func(req *model.Request) (*model.Response, error) { return p.answer(req) })
	p.cfg = cfg
	var history []model.Message
	for i := range rng.IntN(4) {
		history = append(history, model.Message{Role: model.RoleUser, Content: fmt.Sprintf("earlier question %d %s", i, strings.Repeat("q", rng.IntN(300)))})
		if rng.IntN(2) == 0 {
			id := fmt.Sprintf("h%d", i)
			history = append(history, model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: id, Name: "emit", Arguments: []byte(`{"n":1}`)}}},
				model.Message{Role: model.RoleTool, ToolCallID: id, ToolName: "emit", Content: "y"})
		}
		history = append(history, model.Message{Role: model.RoleAssistant, Content: strings.Repeat("a", rng.IntN(300))})
	}
	return p, cfg, history
}

// randomGoSkill renders about size tokens and has a tool that changes its
// state.
func randomGoSkill(t *testing.T, name string, size int) *agent.GoSkill {
	bump, err := tool.New(name+"_bump", "Bump the skill's counter.", func(ctx context.Context, _ struct{}) (string, error) {
		c := agent.SkillContextOf(ctx)
		if c == nil || c.Skill != name {
			return "", fmt.Errorf("the tool of %s ran without its skill's context", name)
		}
		c.State = c.State.(int) + 1
		return fmt.Sprint("bumped to ", c.State), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return &agent.GoSkill{Name: name, Description: "A Go skill.", Init: func() any { return 0 },
		Render: func(c *agent.SkillContext) []string {
			return []string{fmt.Sprintf("%s count %d. %s", name, c.State, strings.Repeat("g", size*4))}
		},
		Tools: []*tool.Tool{bump}}
}

// observe follows the run's events: what is active, what was loaded.
func (p *propTask) observe(ev agent.Event) {
	switch e := ev.Payload.(type) {
	case agent.SkillActivated:
		p.active[e.Skill] = true
	case agent.SkillUnloaded:
		delete(p.active, e.Skill)
	case agent.ContextChanged:
		p.loaded = e.Skills
	case agent.Message:
		if e.Skill != "" {
			p.contents[e.Skill] = "" // the next request shows its content
		}
		p.messages = append(p.messages, ev)
	case agent.LLMCallStarted:
		p.request = e.Context
	case agent.CatalogShortened:
		p.unlisted = e.Unlisted > 0
		if e.Level == "some names" && len(e.Listed)+e.Unlisted != len(p.disclosed()) {
			p.fail("the catalog lists %d and leaves out %d of %d disclosed skills", len(e.Listed), e.Unlisted, len(p.disclosed()))
		}
		if e.Level != "some names" && (e.Listed != nil || e.Unlisted != 0) {
			p.fail("catalog.trimmed at %s has listed %v, unlisted %d", e.Level, e.Listed, e.Unlisted)
		}
	case agent.SkillsSearched:
		for _, name := range e.Results {
			if !slices.Contains(p.disclosed(), name) {
				p.fail("search_skills returned %s, which is not disclosed", name)
			}
		}
	}
}

// disclosed names the skills the model may activate.
func (p *propTask) disclosed() []string {
	var out []string
	for _, s := range p.cfg.Skills {
		if s.Withheld == "" {
			out = append(out, s.Name)
		}
	}
	for _, gs := range p.cfg.GoSkills {
		out = append(out, gs.Name)
	}
	return out
}

// answer checks a request and makes a random next step.
func (p *propTask) answer(req *model.Request) (*model.Response, error) {
	rng := p.rng
	if isSummaryRequest(req) {
		if rng.IntN(8) == 0 {
			return nil, skilld.Errorf(skilld.EUNAVAILABLE, "no summary today")
		}
		return &model.Response{Message: model.Message{Content: "Summary: " + strings.Repeat("s", rng.IntN(200))}}, nil
	}
	p.check(req)
	p.turns++
	if p.turns > p.maxTurns {
		return &model.Response{Message: model.Message{Content: "done"}}, nil
	}
	var tcs []model.ToolCall
	for range 1 + rng.IntN(3) {
		switch k := rng.IntN(10); {
		case k < 3 && len(p.cfg.Skills)+len(p.cfg.GoSkills) > 0:
			names := []string{"no-such-skill"}
			for _, s := range p.cfg.Skills {
				names = append(names, s.Name)
			}
			for _, gs := range p.cfg.GoSkills {
				names = append(names, gs.Name)
			}
			tcs = append(tcs, model.Call(agent.ActivateSkill, map[string]string{"skill_name": names[rng.IntN(len(names))]}))
		case k < 5 && len(p.goTools) > 0:
			var tools []string
			for tl := range p.goTools {
				tools = append(tools, tl)
			}
			slices.Sort(tools)
			tcs = append(tcs, model.Call(tools[rng.IntN(len(tools))], map[string]any{}))
		case k == 5:
			tcs = append(tcs, model.Call(agent.ToolReadToolOutput, map[string]any{"id": "nope"}))
		case k == 6 && slices.Contains(toolNames(req), agent.SearchSkills):
			q := []string{"pkg", "go skill", "nothing at all", "pkg-1"}[rng.IntN(4)]
			tcs = append(tcs, model.Call(agent.SearchSkills, map[string]string{"query": q}))
		default:
			tcs = append(tcs, model.Call("emit", map[string]int{"n": rng.IntN(3000)}))
		}
	}
	return &model.Response{Message: model.Message{Content: strings.Repeat("t", rng.IntN(100)), ToolCalls: tcs}}, nil
}

// check asserts the invariants on one request.
func (p *propTask) check(req *model.Request) {
	eff := int(float64(p.cfg.Window) * (1 - agent.OutputReserve))
	if n := requestTokens(req); n > eff {
		p.fail("turn %d: %d tokens, above the effective window of %d", p.turns, n, eff)
	}
	if err := checkPairs(req); err != nil {
		p.fail("turn %d: %v", p.turns, err)
	}
	// The event's account of the request.
	if p.request == nil {
		p.fail("turn %d: no llm.call.started context before the request", p.turns)
	} else if err := checkRequestContext(*p.request, p.messages, req); err != nil {
		p.fail("turn %d: the llm.call.started context: %v", p.turns, err)
	}
	p.request = nil
	// Skill content.
	if p.cfg.Placement == agent.PlacementContext {
		if len(p.loaded) > p.cfg.MaxLoaded {
			p.fail("turn %d: %d skills loaded, max %d", p.turns, len(p.loaded), p.cfg.MaxLoaded)
		}
		for _, name := range p.loaded {
			if !strings.Contains(req.System, fmt.Sprintf("<skill_content name=%q>", name)) {
				p.fail("turn %d: loaded skill %s is not in the context", p.turns, name)
			}
		}
	} else {
		for name, content := range p.contents {
			if content == "" {
				// Learn the activation's content from this request.
				for _, m := range req.Messages {
					if strings.HasPrefix(m.Content, fmt.Sprintf("<skill_content name=%q>", name)) {
						p.contents[name] = m.Content
					}
				}
				if p.contents[name] == "" {
					p.fail("turn %d: activation of %s missing from the request after it", p.turns, name)
				}
				continue
			}
			if !withCall(req, content) {
				p.fail("turn %d: activation of %s not verbatim with its call", p.turns, name)
			}
		}
	}
	// Tools.
	want := []string{"emit", agent.ToolReadToolOutput}
	disclosed := len(p.cfg.GoSkills) > 0
	for _, s := range p.cfg.Skills {
		disclosed = disclosed || s.Withheld == ""
	}
	if disclosed {
		want = append(want, agent.ActivateSkill)
	}
	if p.unlisted {
		want = append(want, agent.SearchSkills)
	}
	for _, t := range req.Tools {
		if t.Name == agent.ActivateSkill && strings.Contains(string(t.Schema), `"enum"`) == p.unlisted {
			p.fail("turn %d: activate_skill's schema %s, with the catalog unlisting skills: %v", p.turns, t.Schema, p.unlisted)
		}
	}
	for tl, skill := range p.goTools {
		if p.active[skill] && p.cfg.Policy.Decide(tl).Decision != policy.Deny {
			want = append(want, tl)
		}
	}
	slices.Sort(want)
	got := toolNames(req)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		p.fail("turn %d: tools %v, want %v", p.turns, got, want)
	}
	// The message cap (context placement pins nothing).
	if max := p.cfg.MaxMessages; p.cfg.Placement == agent.PlacementContext && max != -1 {
		if max == 0 {
			max = agent.DefaultMaxMessages
		}
		if len(req.Messages) > max && !oneUserOneGroup(req.Messages) {
			p.fail("turn %d: %d messages, above the cap of %d", p.turns, len(req.Messages), max)
		}
	}
}

// oneUserOneGroup: a user message and then one assistant message with its
// results, the window's one allowed excess.
func oneUserOneGroup(msgs []model.Message) bool {
	if len(msgs) < 2 || msgs[0].Role != model.RoleUser {
		return false
	}
	for _, m := range msgs[2:] {
		if m.Role != model.RoleTool {
			return false
		}
	}
	return msgs[1].Role == model.RoleAssistant || msgs[1].Role == model.RoleUser
}
