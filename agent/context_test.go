package agent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/tool"
)

// counterSkill is a Go skill with per-load state (a count) and a store
// value (a total across loads).
func counterSkill(t *testing.T) *agent.GoSkill {
	t.Helper()
	add, err := tool.New("counter_add", "Add n to the counter.", func(ctx context.Context, p struct {
		N int `json:"n"`
	}) (string, error) {
		c := agent.SkillContextOf(ctx)
		c.State = c.State.(int) + p.N
		total, _, err := agent.StoreGet[int](c.Store, "total")
		if err != nil {
			return "", err
		}
		if err := agent.StoreSet(ctx, c.Store, "total", total+p.N); err != nil {
			return "", err
		}
		return fmt.Sprintf("count is %d", c.State), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return &agent.GoSkill{
		Name: "counter", Description: "Counts things.",
		Init: func() any { return 0 },
		Render: func(c *agent.SkillContext) []string {
			total, _, _ := agent.StoreGet[int](c.Store, "total")
			return []string{fmt.Sprintf("Counter skill. Count of this load: %d. Total ever: %d.", c.State, total)}
		},
		Tools: []*tool.Tool{add},
	}
}

func activateCall(name string) *model.Response {
	return calls(agent.ActivateSkill, map[string]string{"skill_name": name})
}

func lastContent(req *model.Request) string { return req.Messages[len(req.Messages)-1].Content }

// TestContextPlacement walks a skill's life in context placement: loads into
// <current_context>, least-recently-used unloading, re-activation, a Go
// skill's tools coming and going with it, per-load state dropped and the
// store kept.
func TestContextPlacement(t *testing.T) {
	pkgs := &agent.MemoryPackages{}
	var skills []agent.Skill
	for _, n := range []string{"alpha", "beta", "gamma"} {
		skills = append(skills, bigSkill(t, pkgs, n, 50))
	}
	has := func(req *model.Request, name string) bool {
		return strings.Contains(req.System, fmt.Sprintf("<skill_content name=%q>", name))
	}
	offered := func(req *model.Request, name string) bool {
		for _, s := range req.Tools {
			if s.Name == name {
				return true
			}
		}
		return false
	}
	m := script(t,
		do(agent.ActivateSkill, map[string]string{"skill_name": "alpha"}),
		func(t *testing.T, req *model.Request) *model.Response {
			if c := lastContent(req); !strings.HasPrefix(c, "[context changed] Loaded skill 'alpha'") || !strings.Contains(c, "begins:\n- ---") {
				t.Errorf("load entry: %q", c)
			}
			if !has(req, "alpha") || !strings.Contains(req.System, "<current_context>") {
				t.Errorf("alpha not in the context:\n%s", req.System)
			}
			return activateCall("beta")
		},
		do(agent.ActivateSkill, map[string]string{"skill_name": "counter"}),
		func(t *testing.T, req *model.Request) *model.Response {
			if !offered(req, "counter_add") || !strings.Contains(req.System, "Count of this load: 0") {
				t.Errorf("counter loaded without its tool or render: %v", toolNames(req))
			}
			return calls("counter_add", map[string]int{"n": 2}, agent.ActivateSkill, map[string]string{"skill_name": "alpha"})
		},
		func(t *testing.T, req *model.Request) *model.Response {
			r := req.Messages[len(req.Messages)-2:]
			if r[0].Content != "count is 2" || !strings.Contains(r[1].Content, "already loaded; it is now the active skill") {
				t.Errorf("tool and re-activation: %+v", r)
			}
			if strings.Count(req.System, `<skill_content name="alpha">`) != 1 || !strings.Contains(req.System, "the active one is alpha") || !strings.Contains(req.System, "Count of this load: 2. Total ever: 2.") {
				t.Errorf("after re-activation:\n%s", req.System)
			}
			// A fourth skill unloads the least recently used: beta.
			return activateCall("gamma")
		},
		func(t *testing.T, req *model.Request) *model.Response {
			if c := lastContent(req); !strings.Contains(c, "Unloaded: 'beta'") {
				t.Errorf("gamma's entry: %q", c)
			}
			if has(req, "beta") || !has(req, "counter") || !has(req, "alpha") || !has(req, "gamma") {
				t.Errorf("after gamma:\n%s", req.System)
			}
			return activateCall("beta") // unloads counter
		},
		func(t *testing.T, req *model.Request) *model.Response {
			if offered(req, "counter_add") || has(req, "counter") {
				t.Errorf("counter's tool or text stayed after its unload")
			}
			return calls("counter_add", map[string]int{"n": 1})
		},
		func(t *testing.T, req *model.Request) *model.Response {
			if last := req.Messages[len(req.Messages)-1]; !last.IsError || last.Content != "Error: Unknown tool: counter_add" {
				t.Errorf("calling an unloaded skill's tool: %+v", last)
			}
			return activateCall("counter")
		},
		func(t *testing.T, req *model.Request) *model.Response {
			// Loaded again: a fresh state, the store kept.
			if !strings.Contains(req.System, "Count of this load: 0. Total ever: 2.") {
				t.Errorf("reloaded counter:\n%s", req.System)
			}
			return &model.Response{Message: model.Message{Content: "done"}}
		},
	)
	log := &agent.MemoryLog{}
	a, err := agent.New(agent.Config{Model: m, Window: 100000, Tokenizer: runeCounter{}, Skills: skills, Packages: pkgs,
		GoSkills: []*agent.GoSkill{counterSkill(t)}, Placement: agent.PlacementContext, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	events := collect(t, a, agent.Task{ID: "t", Input: "go"})
	var unloaded []string
	for _, u := range payloads[agent.SkillUnloaded](events) {
		unloaded = append(unloaded, u.Skill)
	}
	if strings.Join(unloaded, " ") != "beta counter alpha" {
		t.Errorf("unloaded %v", unloaded)
	}
	if n := len(ofType(events, agent.EventContextChanged)); n != 7 {
		t.Errorf("%d context.changed events, want 7", n)
	}
	if last := events[len(events)-1]; last.Type != agent.EventTaskCompleted {
		t.Errorf("last event %+v", last)
	}
	// The store is in the log: a restarted task gets it back.
	store, err := agent.NewKVStoreFromLog(log.Entries())
	if err != nil {
		t.Fatal(err)
	}
	if total, ok, _ := agent.StoreGet[int](store, "total"); !ok || total != 2 {
		t.Errorf("store from the log: %d %v", total, ok)
	}
}
