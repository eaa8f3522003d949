package agent_test

import (
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/policy"
)

func skillWithAllowed(t *testing.T, pkgs *agent.MemoryPackages, name, allowed string) agent.Skill {
	t.Helper()
	md := "---\nname: " + name + "\ndescription: Git helper.\nallowed-tools: " + allowed + "\n---\nUse git.\n"
	p, err := pack.New([]pack.File{{Path: "SKILL.md", Data: []byte(md)}}, pack.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return skillFromPackage(t, pkgs, p, "id-"+name)
}

// TestAllowedTools: while a skill is active, calls its allowed-tools
// match skip require_approval; other calls, compound commands and denied
// tools do not; in context placement the pre-approval leaves with the
// skill.
func TestAllowedTools(t *testing.T) {
	for _, placement := range []string{agent.PlacementTranscript, agent.PlacementContext} {
		t.Run(placement, func(t *testing.T) {
			pkgs := &agent.MemoryPackages{}
			git := skillWithAllowed(t, pkgs, "git-helper", "Bash(git:*) Read Write")
			other := bigSkill(t, pkgs, "other", 20)
			sb := newSandbox(t)
			results := func(req *model.Request, n int) []model.Message { return req.Messages[len(req.Messages)-n:] }
			approved := func(m model.Message) bool { return !strings.Contains(m.Content, "no one can approve") }
			steps := []step{
				do(agent.ToolShell, map[string]string{"command": "git --version"}),
				func(t *testing.T, req *model.Request) *model.Response {
					if approved(results(req, 1)[0]) {
						t.Errorf("pre-approved before the skill was active: %+v", results(req, 1)[0])
					}
					return calls(agent.ActivateSkill, map[string]string{"skill_name": "git-helper"},
						agent.ToolShell, map[string]string{"command": "git --version"},
						agent.ToolShell, map[string]string{"command": "git --version; echo injected"},
						agent.ToolShell, map[string]string{"command": "echo not git"},
						agent.ToolReadFile, map[string]string{"path": "missing.txt"},
						agent.ToolWriteFile, map[string]string{"path": "x.txt", "content": "x"})
				},
				func(t *testing.T, req *model.Request) *model.Response {
					r := results(req, 5)
					if !approved(r[0]) || approved(r[1]) || approved(r[2]) || !approved(r[3]) {
						t.Errorf("pre-approvals: %+v", r)
					}
					if !r[4].IsError || !strings.Contains(r[4].Content, "Unknown tool: write_file") {
						t.Errorf("a deny rule must win over allowed-tools: %+v", r[4])
					}
					if placement == agent.PlacementTranscript {
						return &model.Response{Message: model.Message{Content: "done"}}
					}
					return calls(agent.ActivateSkill, map[string]string{"skill_name": "other"},
						agent.ToolShell, map[string]string{"command": "git --version"})
				},
			}
			if placement == agent.PlacementContext {
				steps = append(steps, func(t *testing.T, req *model.Request) *model.Response {
					if r := results(req, 1)[0]; approved(r) {
						t.Errorf("pre-approval stayed after the unload: %+v", r)
					}
					return &model.Response{Message: model.Message{Content: "done"}}
				})
			}
			pol := policy.Merge(policy.Level{Name: "workspace", Policy: skilld.ToolPolicy{RequireApproval: []string{"shell", "read_file"}, Denied: []string{"write_file"}}})
			maxLoaded := 0 // only context placement loads and unloads
			if placement == agent.PlacementContext {
				maxLoaded = 1
			}
			a, err := agent.New(agent.Config{Model: script(t, steps...), Window: 100000, Tokenizer: runeCounter{}, Skills: []agent.Skill{git, other}, Packages: pkgs,
				Sandbox: sb, Policy: pol, Placement: placement, MaxLoaded: maxLoaded})
			if err != nil {
				t.Fatal(err)
			}
			events := collect(t, a, agent.Task{ID: "t", Input: "x"})
			pre := payloads[agent.ToolPreapproved](events)
			if len(pre) != 2 || pre[0].Skill != "git-helper" || pre[0].Allowed != "Bash(git:*)" || pre[1].Allowed != "Read" {
				t.Errorf("tool.preapproved events: %+v", pre)
			}
		})
	}
}
