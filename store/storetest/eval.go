package storetest

import (
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

func testEvalResults(t *testing.T, open Opener) {
	s := open(t)
	ws := newWorkspace(t, s, "w")
	other := newWorkspace(t, s, "other")
	sk := newSkill(t, s, ws.ID, "csv")
	ag := must[*skilld.Agent](t)(s.AgentCreate(ctx(t), &store.AgentCreateParams{WorkspaceID: ws.ID, Name: "analyst", Skills: []skilld.AgentSkill{{SkillID: sk.ID}}}))
	rates := []skilld.EvalRate{{Query: "columns of data.csv?", ShouldTrigger: true, Triggers: 2, Runs: 3, Rate: 2.0 / 3, Low: 0.2077, High: 0.9385,
		Others: map[string]int{"notes": 1}}}
	res := skilld.EvalResult{WorkspaceID: ws.ID, AgentID: ag.ID, SkillID: sk.ID, Skill: "csv", SkillDigest: "sha256:aa", Model: "openai:gpt-4o-mini",
		Precision: 0.75, Recall: 2.0 / 3, Runs: 3, Queries: 1, Rates: rates, Tokens: 1 << 40}
	first := must[*skilld.EvalResult](t)(s.EvalResultCreate(ctx(t), &store.EvalResultCreateParams{Result: res}))
	if first.ID == "" || first.CreatedAt.IsZero() || first.Recall != 2.0/3 || first.Tokens != 1<<40 || len(first.Rates) != 1 || first.Rates[0].Others["notes"] != 1 {
		t.Fatalf("created %+v", first)
	}
	res.SkillDigest, res.Precision, res.Rates = "sha256:bb", 1, nil
	second := must[*skilld.EvalResult](t)(s.EvalResultCreate(ctx(t), &store.EvalResultCreateParams{Result: res}))
	res.Model = "anthropic:claude"
	must[*skilld.EvalResult](t)(s.EvalResultCreate(ctx(t), &store.EvalResultCreateParams{Result: res}))

	all := must[[]*skilld.EvalResult](t)(s.EvalResultList(ctx(t), &store.EvalResultListParams{WorkspaceID: ws.ID, AgentID: ag.ID}))
	if len(all) != 3 || all[2].ID != first.ID || all[1].ID != second.ID {
		t.Fatalf("listed %d results, newest first expected", len(all))
	}
	got := must[[]*skilld.EvalResult](t)(s.EvalResultList(ctx(t), &store.EvalResultListParams{WorkspaceID: ws.ID, SkillID: sk.ID, SkillDigest: "sha256:aa", Model: "openai:gpt-4o-mini"}))
	if len(got) != 1 || got[0].ID != first.ID || got[0].Rates[0].Query != rates[0].Query || got[0].Rates[0].Rate != rates[0].Rate {
		t.Errorf("narrowed list %+v", got)
	}
	if got := must[[]*skilld.EvalResult](t)(s.EvalResultList(ctx(t), &store.EvalResultListParams{WorkspaceID: ws.ID, Limit: 1})); len(got) != 1 || got[0].Model != "anthropic:claude" || got[0].Rates == nil {
		t.Errorf("limited list %+v", got)
	}
	if got := must[[]*skilld.EvalResult](t)(s.EvalResultList(ctx(t), &store.EvalResultListParams{WorkspaceID: other.ID})); len(got) != 0 {
		t.Errorf("another workspace sees %d results", len(got))
	}

	bad := res
	bad.Recall = 1.5
	_, err := s.EvalResultCreate(ctx(t), &store.EvalResultCreateParams{Result: bad})
	wantCode(t, err, skilld.EINVALID)
	bad = res
	bad.AgentID = "missing"
	_, err = s.EvalResultCreate(ctx(t), &store.EvalResultCreateParams{Result: bad})
	wantCode(t, err, skilld.ENOTFOUND)

	// Results go with their agent.
	if err := s.AgentDelete(ctx(t), &store.AgentDeleteParams{WorkspaceID: ws.ID, ID: ag.ID}); err != nil {
		t.Fatal(err)
	}
	if got := must[[]*skilld.EvalResult](t)(s.EvalResultList(ctx(t), &store.EvalResultListParams{WorkspaceID: ws.ID})); len(got) != 0 {
		t.Errorf("%d results outlived their agent", len(got))
	}
}
