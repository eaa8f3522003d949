package storetest

import (
	"fmt"
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
	must[*skilld.Agent](t)(s.AgentCreate(ctx(t), &store.AgentCreateParams{WorkspaceID: ws.ID, Name: "another", Skills: []skilld.AgentSkill{{SkillID: a1.ID}, {SkillID: a2.ID}}}))
	agents, total, err := s.AgentList(ctx(t), &store.AgentListParams{WorkspaceID: ws.ID})
	if err != nil || total != 2 || len(agents) != 2 || agents[0].Name != "another" || len(agents[0].Skills) != 2 || len(agents[1].Skills) != 1 {
		t.Errorf("list: %d agents, total %d, err %v", len(agents), total, err)
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
}
