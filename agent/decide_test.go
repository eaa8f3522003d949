package agent_test

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
)

// decideConfig is an agent with two example skills attached and m as its
// model.
func decideConfig(t *testing.T, m model.Model) agent.Config {
	pkgs := &agent.MemoryPackages{}
	return agent.Config{
		Model: m, ModelName: "m", Instruction: "You help with releases.", Window: 100_000, Tokenizer: runeCounter{},
		Skills: []agent.Skill{
			loadSkill(t, pkgs, filepath.Join("..", "examples", "skills", "csv-inspector"), "s1"),
			loadSkill(t, pkgs, filepath.Join("..", "examples", "skills", "release-notes"), "s2"),
		},
		Packages: pkgs,
	}
}

// The request Decide sends is the first request a run sends: built by the
// same code, it has the same system prompt, tools and messages.
func TestDecideSendsTheRunsFirstRequest(t *testing.T) {
	const query = "Write release notes for v2"
	ran := model.NewScripted(model.Reply("done"))
	a, err := agent.New(decideConfig(t, ran))
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range a.Run(t.Context(), agent.Task{ID: "t", Input: query}) {
		if err != nil {
			t.Fatal(err)
		}
	}
	decided := model.NewScripted(model.Reply("", model.Call(agent.ActivateSkill, map[string]string{"skill_name": "release-notes"})))
	d, err := agent.Decide(t.Context(), decideConfig(t, decided), query)
	if err != nil {
		t.Fatal(err)
	}
	if d.Skill != "release-notes" || d.OtherTool != "" {
		t.Errorf("decision %+v, want release-notes", d)
	}
	want, got := ran.Requests()[0], decided.Requests()
	if len(got) != 1 {
		t.Fatalf("Decide made %d model calls, want 1", len(got))
	}
	if !reflect.DeepEqual(want, got[0]) {
		w, _ := json.MarshalIndent(want, "", " ")
		g, _ := json.MarshalIndent(got[0], "", " ")
		t.Errorf("Decide's request differs from the run's first:\nrun:    %s\ndecide: %s", w, g)
	}
}

func TestDecideOutcomes(t *testing.T) {
	cases := []struct {
		name  string
		reply model.Step
		want  agent.Decision
	}{
		{"answer", model.Step{Response: &model.Response{Message: model.Message{Content: "hi"}, Usage: model.Usage{PromptTokens: 50, CompletionTokens: 2}}},
			agent.Decision{Usage: model.Usage{PromptTokens: 50, CompletionTokens: 2}}},
		{"other tool first", model.Reply("", model.Call("read_tool_output", map[string]string{"id": "x"})), agent.Decision{OtherTool: "read_tool_output"}},
		{"activation after another call", model.Reply("", model.Call("read_tool_output", map[string]string{"id": "x"}),
			model.Call(agent.ActivateSkill, map[string]string{"skill_name": "csv-inspector"})), agent.Decision{Skill: "csv-inspector"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := agent.Decide(t.Context(), decideConfig(t, model.NewScripted(c.reply)), "look at data.csv")
			if err != nil {
				t.Fatal(err)
			}
			if d != c.want {
				t.Errorf("decision %+v, want %+v", d, c.want)
			}
		})
	}
}

func TestDecideErrors(t *testing.T) {
	cfg := decideConfig(t, model.NewScripted())
	if _, err := agent.Decide(t.Context(), cfg, "anything"); skilld.ErrorCode(err) != skilld.EINVALID {
		t.Errorf("a model without answers: %v, want invalid", err)
	}
	cfg.Window = 0
	if _, err := agent.Decide(t.Context(), cfg, "anything"); skilld.ErrorCode(err) != skilld.EINVALID {
		t.Errorf("no window: %v, want invalid", err)
	}
	cfg = decideConfig(t, model.NewScripted(model.Reply("x")))
	cfg.Window = 300 // the catalog and tools alone do not fit
	if _, err := agent.Decide(t.Context(), cfg, "anything"); skilld.ErrorCode(err) != skilld.ETOOLARGE {
		t.Errorf("a request over the window: %v, want too_large", err)
	}
}
