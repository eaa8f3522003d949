package agent_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/policy"
)

// TestProgressiveDisclosure walks the three tiers end to end: the catalog
// and the enum in the first request, the skill's content in the next one
// and its files in the sandbox, an idempotent second activation, and the
// skill's script run through the shell tool.
func TestProgressiveDisclosure(t *testing.T) {
	pkgs := &agent.MemoryPackages{}
	csv := loadSkill(t, pkgs, exampleDir("csv-inspector"), "skill-csv")
	notes := loadSkill(t, pkgs, exampleDir("release-notes"), "skill-notes")
	sb := newSandbox(t)
	dir := pack.SandboxDir(csv.Name, csv.ID)

	m := script(t,
		func(t *testing.T, req *model.Request) *model.Response {
			for _, want := range []string{"## Available skills", "- csv-inspector: Summarize a CSV file", "- release-notes:", "scripts/csv-summary.sh"} {
				if !strings.Contains(req.System, want) {
					t.Errorf("first request's system prompt lacks %q:\n%s", want, req.System)
				}
			}
			if !strings.HasPrefix(req.System, "You analyse data.") {
				t.Errorf("the instruction must come first:\n%s", req.System)
			}
			var enum []string
			for _, tl := range req.Tools {
				if tl.Name == agent.ActivateSkill {
					var s struct {
						Properties struct {
							SkillName struct{ Enum []string } `json:"skill_name"`
						}
					}
					json.Unmarshal(tl.Schema, &s)
					enum = s.Properties.SkillName.Enum
				}
			}
			if !slices.Equal(enum, []string{"csv-inspector", "release-notes"}) {
				t.Errorf("activate_skill enum = %v", enum)
			}
			return calls(agent.ActivateSkill, map[string]string{"skill_name": "csv-inspector"})
		},
		func(t *testing.T, req *model.Request) *model.Response {
			last := req.Messages[len(req.Messages)-1]
			if last.Role != model.RoleTool || !strings.HasPrefix(last.Content, `<skill_content name="csv-inspector">`) ||
				!strings.Contains(last.Content, "# CSV inspector") || !strings.Contains(last.Content, dir+"/") || !strings.Contains(last.Content, "- scripts/csv-summary.sh") {
				t.Errorf("activation result:\n%s", last.Content)
			}
			info, err := sb.Stat(t.Context(), dir+"/scripts/csv-summary.sh")
			if err != nil || info.Mode.Perm()&0o111 == 0 || !info.ReadOnly {
				t.Errorf("script not materialized executable: %v %v", info, err)
			}
			return calls(agent.ActivateSkill, map[string]string{"skill_name": "csv-inspector"},
				agent.ToolWriteFile, map[string]string{"path": "data.csv", "content": "a,b\n1,2\n3,\n5,6\n"})
		},
		func(t *testing.T, req *model.Request) *model.Response {
			again := req.Messages[len(req.Messages)-2]
			if again.IsError || !strings.Contains(again.Content, "Skill 'csv-inspector' is already active") {
				t.Errorf("second activation: %+v", again)
			}
			return calls(agent.ToolShell, map[string]string{"command": "sh " + dir + "/scripts/csv-summary.sh data.csv"})
		},
		func(t *testing.T, req *model.Request) *model.Response {
			out := req.Messages[len(req.Messages)-1].Content
			if !strings.Contains(out, "rows: 3") || !strings.Contains(out, "b (1)") || !strings.Contains(out, "[exit status 0]") {
				t.Errorf("script output:\n%s", out)
			}
			return &model.Response{Message: model.Message{Content: "The file has 3 rows."}}
		},
	)
	log := &agent.MemoryLog{}
	a, err := agent.New(agent.Config{
		Model: m, Instruction: "You analyse data.", Window: 128000, Tokenizer: runeCounter{},
		Skills: []agent.Skill{csv, notes}, Packages: pkgs, Sandbox: sb, Log: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	events := collect(t, a, agent.Task{ID: "task-1", Input: "How many rows has data.csv?"})
	if n := len(m.Requests()); n != 4 {
		t.Fatalf("%d model requests, want 4", n)
	}

	// Events: in order, gap-free, the same as the log.
	entries := log.Entries()
	if len(events) != len(entries) {
		t.Fatalf("%d events, %d log entries", len(events), len(entries))
	}
	for i, e := range events {
		if e.Seq != int64(i+1) || e.TaskID != "task-1" || e.Time.IsZero() {
			t.Fatalf("event %d: seq %d task %q", i, e.Seq, e.TaskID)
		}
	}
	if events[0].Type != agent.EventTaskStarted || events[len(events)-1].Type != agent.EventTaskCompleted {
		t.Errorf("first %s, last %s", events[0].Type, events[len(events)-1].Type)
	}
	if out := events[len(events)-1].Payload.(agent.TaskCompleted).Output; out != "The file has 3 rows." {
		t.Errorf("output %v", out)
	}
	act := payloads[agent.SkillActivated](events)
	if len(act) != 1 || act[0].Skill != "csv-inspector" || act[0].Placement != "transcript" || act[0].Tokens <= 0 {
		t.Errorf("skill.activated events: %+v", act)
	}
	if mat := payloads[agent.SkillMaterialized](events); len(mat) != 1 || mat[0].Dir != dir || mat[0].Error != "" {
		t.Errorf("skill.materialized events: %+v", mat)
	}
	if n := len(ofType(events, agent.EventLLMCallCompleted)); n != 4 {
		t.Errorf("%d llm.call.completed", n)
	}
	// No event carries the SKILL.md body.
	for _, e := range events {
		b, _ := json.Marshal(e)
		if strings.Contains(string(b), "Look before you compute") {
			t.Errorf("event %s carries the skill body: %s", e.Type, b)
		}
	}
	// The log keeps the full activation for the transcript.
	var found bool
	for _, en := range entries {
		if en.Kind == agent.KindMessage && strings.Contains(string(en.Payload), "Look before you compute") {
			found = true
		}
	}
	if !found {
		t.Error("the log lost the activation's content")
	}
	if _, err := sb.Stat(t.Context(), pack.SandboxDir(notes.Name, notes.ID)); skilld.ErrorCode(err) != skilld.ENOTFOUND {
		t.Error("a skill that was not activated was materialized")
	}
}

func TestPolicyAndWithheld(t *testing.T) {
	pkgs := &agent.MemoryPackages{}
	csv := loadSkill(t, pkgs, exampleDir("csv-inspector"), "a")
	notes := loadSkill(t, pkgs, exampleDir("release-notes"), "b")
	notes.Withheld = `install policy rule 1 (deny registry "github")`
	m := script(t,
		func(t *testing.T, req *model.Request) *model.Response {
			names := toolNames(req)
			if slices.Contains(names, agent.ToolShell) {
				t.Errorf("denied shell offered: %v", names)
			}
			if !slices.Contains(names, agent.ToolReadToolOutput) {
				t.Errorf("control-flow tool withheld: %v", names)
			}
			if strings.Contains(req.System, "release-notes") {
				t.Errorf("withheld skill in the catalog:\n%s", req.System)
			}
			return calls(agent.ToolShell, map[string]string{"command": "id"}, agent.ActivateSkill, map[string]string{"skill_name": "release-notes"})
		},
		func(t *testing.T, req *model.Request) *model.Response {
			shell, act := req.Messages[len(req.Messages)-2], req.Messages[len(req.Messages)-1]
			if !shell.IsError || shell.Content != "Error: Unknown tool: shell" {
				t.Errorf("denied call: %+v", shell)
			}
			if !act.IsError || !strings.Contains(act.Content, "withheld") || !strings.Contains(act.Content, `deny registry "github"`) {
				t.Errorf("withheld activation: %+v", act)
			}
			return calls(agent.ToolWriteFile, map[string]string{"path": "x.txt", "content": "x"})
		},
		func(t *testing.T, req *model.Request) *model.Response {
			if last := req.Messages[len(req.Messages)-1]; !last.IsError || !strings.Contains(last.Content, "no one can approve") {
				t.Errorf("approval without approver: %+v", last)
			}
			return &model.Response{Message: model.Message{Content: "done"}}
		},
	)
	a, err := agent.New(agent.Config{
		Model: m, Window: 100000, Tokenizer: runeCounter{}, Skills: []agent.Skill{csv, notes}, Packages: pkgs, Sandbox: newSandbox(t),
		Policy: policy.Merge(policy.Level{Name: "workspace", Policy: skilld.ToolPolicy{Denied: []string{"shell", "read_*"}, RequireApproval: []string{"write_*"}}}),
	})
	if err != nil {
		t.Fatal(err)
	}
	events := collect(t, a, agent.Task{ID: "t", Input: "go"})
	if w := payloads[agent.SkillWithheld](events); len(w) != 1 || w[0].Skill != "release-notes" || !strings.Contains(w[0].Rule, "github") {
		t.Errorf("skill.withheld: %+v", w)
	}
	denied := payloads[agent.ToolDenied](events)
	if len(denied) != 2 || denied[0].Tool != "shell" || !strings.Contains(denied[0].Reason, "workspace policy (shell)") {
		t.Errorf("tool.denied: %+v", denied)
	}
	if n := len(ofType(events, agent.EventSkillActivated)); n != 0 {
		t.Errorf("%d activations", n)
	}
}

func toolNames(req *model.Request) []string {
	var out []string
	for _, t := range req.Tools {
		out = append(out, t.Name)
	}
	return out
}

func TestActivateDeniedHidesCatalog(t *testing.T) {
	pkgs := &agent.MemoryPackages{}
	csv := loadSkill(t, pkgs, exampleDir("csv-inspector"), "a")
	m := script(t, func(t *testing.T, req *model.Request) *model.Response {
		if strings.Contains(req.System, "Available skills") || slices.Contains(toolNames(req), agent.ActivateSkill) {
			t.Errorf("catalog or activate_skill offered although denied:\n%s %v", req.System, toolNames(req))
		}
		return &model.Response{Message: model.Message{Content: "ok"}}
	})
	a, _ := agent.New(agent.Config{Model: m, Window: 100000, Tokenizer: runeCounter{}, Skills: []agent.Skill{csv}, Packages: pkgs,
		Policy: policy.Merge(policy.Level{Name: "agent", Policy: skilld.ToolPolicy{Denied: []string{"activate_*"}}})})
	collect(t, a, agent.Task{ID: "t", Input: "x"})
}
