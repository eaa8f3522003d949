package storetest

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

func testAgents(t *testing.T, open Opener) {
	s := open(t)
	ws := newWorkspace(t, s, "w")
	other := newWorkspace(t, s, "other")
	a1, a2 := newSkill(t, s, ws.ID, "a1"), newSkill(t, s, ws.ID, "a2")
	foreign := newSkill(t, s, other.ID, "foreign")
	cfg := skilld.AgentConfig{Instruction: "Be brief.", Model: "openai:gpt-4o-mini",
		Tools: skilld.ToolPolicy{Denied: []string{"shell"}}, Context: skilld.ContextSettings{Window: 128000, Placement: "transcript"}}
	ag := must[*skilld.Agent](t)(s.AgentCreate(ctx(t), &store.AgentCreateParams{
		WorkspaceID: ws.ID, Name: "helper", Config: cfg, CreatedBy: "ada",
		Skills: []skilld.AgentSkill{{SkillID: a2.ID, Version: 3}, {SkillID: a1.ID}},
	}))
	if fmt.Sprint(ag.Config) != fmt.Sprint(cfg) || len(ag.Skills) != 2 || ag.Skills[0].SkillID != a2.ID || ag.Skills[0].Version != 3 {
		t.Fatalf("agent %+v", ag)
	}
	_, err := s.AgentCreate(ctx(t), &store.AgentCreateParams{WorkspaceID: ws.ID, Name: "helper"})
	wantCode(t, err, skilld.ECONFLICT)
	_, err = s.AgentCreate(ctx(t), &store.AgentCreateParams{WorkspaceID: ws.ID, Name: "thief", Skills: []skilld.AgentSkill{{SkillID: foreign.ID}}})
	wantCode(t, err, skilld.ENOTFOUND)
	_, err = s.AgentCreate(ctx(t), &store.AgentCreateParams{WorkspaceID: ws.ID, Name: "twice", Skills: []skilld.AgentSkill{{SkillID: a1.ID}, {SkillID: a1.ID}}})
	wantCode(t, err, skilld.EINVALID)
	if _, err := s.AgentGet(ctx(t), &store.AgentGetParams{WorkspaceID: ws.ID, Name: "thief"}); skilld.ErrorCode(err) != skilld.ENOTFOUND {
		t.Errorf("a refused create left an agent behind: %v", err)
	}

	cfg.Instruction = "Be thorough."
	up := must[*skilld.Agent](t)(s.AgentUpdate(ctx(t), &store.AgentUpdateParams{WorkspaceID: ws.ID, ID: ag.ID, Config: &cfg, Skills: &[]skilld.AgentSkill{{SkillID: a1.ID}}}))
	if up.Config.Instruction != "Be thorough." || len(up.Skills) != 1 || up.Name != "helper" {
		t.Errorf("updated %+v", up)
	}
	// A change computed from the config as it was is refused once that
	// config has changed, and changes nothing; from the current one it
	// goes through.
	stale, next := ag.Config, up.Config
	next.Model = "anthropic:claude-sonnet-4"
	_, err = s.AgentUpdate(ctx(t), &store.AgentUpdateParams{WorkspaceID: ws.ID, ID: ag.ID, Config: &next, ExpectedConfig: &stale, Name: ptr("renamed")})
	if wantCode(t, err, skilld.ECONFLICT); !errors.Is(err, store.ErrAgentChanged) {
		t.Errorf("a stale update: %v", err)
	}
	if got := must[*skilld.Agent](t)(s.AgentGet(ctx(t), &store.AgentGetParams{WorkspaceID: ws.ID, ID: ag.ID})); got.Name != "helper" || got.Config.Model != cfg.Model {
		t.Errorf("a refused update changed the agent: %+v", got)
	}
	cur := up.Config
	up = must[*skilld.Agent](t)(s.AgentUpdate(ctx(t), &store.AgentUpdateParams{WorkspaceID: ws.ID, ID: ag.ID, Config: &next, ExpectedConfig: &cur}))
	if up.Config.Model != next.Model || up.Config.Instruction != "Be thorough." {
		t.Errorf("updated from the current config: %+v", up.Config)
	}
	_, err = s.AgentUpdate(ctx(t), &store.AgentUpdateParams{WorkspaceID: other.ID, ID: ag.ID, Config: &next})
	wantCode(t, err, skilld.ENOTFOUND)
	must[*skilld.Agent](t)(s.AgentCreate(ctx(t), &store.AgentCreateParams{WorkspaceID: ws.ID, Name: "another", Skills: []skilld.AgentSkill{{SkillID: a1.ID}, {SkillID: a2.ID}}}))
	agents, total, err := s.AgentList(ctx(t), &store.AgentListParams{WorkspaceID: ws.ID})
	if err != nil || total != 2 || len(agents) != 2 || agents[0].Name != "another" || len(agents[0].Skills) != 2 || len(agents[1].Skills) != 1 {
		t.Errorf("list: %d agents, total %d, err %v", len(agents), total, err)
	}
	// The agents that have a skill: what deleting it changes.
	for skill, want := range map[string]string{a1.ID: "another helper", a2.ID: "another", foreign.ID: ""} {
		agents, total, err := s.AgentList(ctx(t), &store.AgentListParams{WorkspaceID: ws.ID, SkillID: skill})
		var names []string
		for _, a := range agents {
			names = append(names, a.Name)
		}
		if got := strings.Join(names, " "); err != nil || got != want || total != len(agents) {
			t.Errorf("agents with skill %s: %q, total %d, err %v; want %q", skill, got, total, err, want)
		}
	}
	// Deleting a skill detaches it from every agent.
	if err := s.SkillDelete(ctx(t), &store.SkillDeleteParams{WorkspaceID: ws.ID, ID: a1.ID}); err != nil {
		t.Fatal(err)
	}
	if got := must[*skilld.Agent](t)(s.AgentGet(ctx(t), &store.AgentGetParams{WorkspaceID: ws.ID, ID: ag.ID})); len(got.Skills) != 0 {
		t.Errorf("skills after delete: %+v", got.Skills)
	}
	_, err = s.AgentGet(ctx(t), &store.AgentGetParams{WorkspaceID: other.ID, ID: ag.ID})
	wantCode(t, err, skilld.ENOTFOUND)
	if err := s.AgentDelete(ctx(t), &store.AgentDeleteParams{WorkspaceID: ws.ID, ID: ag.ID}); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.AgentDelete(ctx(t), &store.AgentDeleteParams{WorkspaceID: ws.ID, ID: ag.ID}), skilld.ENOTFOUND)
	t.Run("ConcurrentChanges", func(t *testing.T) { testConcurrentAgentChanges(t, open) })
}

// testConcurrentAgentChanges has 8 writers each add their own variable to
// one agent's config by read-modify-write with ExpectedConfig, retrying
// when refused: no change may be lost.
func testConcurrentAgentChanges(t *testing.T, open Opener) {
	s := open(t)
	ws := newWorkspace(t, s, "w")
	ag := must[*skilld.Agent](t)(s.AgentCreate(ctx(t), &store.AgentCreateParams{WorkspaceID: ws.ID, Name: "shared"}))
	const writers = 8
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i := range writers {
		wg.Go(func() {
			for {
				cur, err := s.AgentGet(ctx(t), &store.AgentGetParams{WorkspaceID: ws.ID, ID: ag.ID})
				if err != nil {
					errs <- err
					return
				}
				next := cur.Config
				next.Sandbox.Env = maps.Clone(cur.Config.Sandbox.Env)
				if next.Sandbox.Env == nil {
					next.Sandbox.Env = map[string]string{}
				}
				next.Sandbox.Env[fmt.Sprint("V", i)] = "x"
				_, err = s.AgentUpdate(ctx(t), &store.AgentUpdateParams{WorkspaceID: ws.ID, ID: ag.ID, Config: &next, ExpectedConfig: &cur.Config})
				if errors.Is(err, store.ErrAgentChanged) {
					continue
				}
				if err != nil {
					errs <- err
				}
				return
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := must[*skilld.Agent](t)(s.AgentGet(ctx(t), &store.AgentGetParams{WorkspaceID: ws.ID, ID: ag.ID})); len(got.Config.Sandbox.Env) != writers {
		t.Errorf("after %d concurrent changes the config has %v", writers, got.Config.Sandbox.Env)
	}
}
