package agent_test

import (
	"strings"
	"testing"

	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/pack"
)

// TestUserInvocation: a skill with no model invocation is in neither the
// catalog nor activate_skill's choices, and the model cannot activate it
// by name; a task whose input is "/name args" activates it for the user,
// with $ARGUMENTS, $1 and ${SKILL_DIR} filled in its instructions; a skill
// the user may not invoke ignores the slash.
func TestUserInvocation(t *testing.T) {
	pkgs := &agent.MemoryPackages{}
	mk := func(name, body string) agent.Skill {
		p, err := pack.New([]pack.File{{Path: "SKILL.md", Data: []byte("---\nname: " + name + "\ndescription: Deploys things. Use when asked to deploy.\n---\n" + body)}}, pack.InlineLimits())
		if err != nil {
			t.Fatal(err)
		}
		return skillFromPackage(t, pkgs, p, name+"-id")
	}
	deploy := mk("deploy", "Deploy $ARGUMENTS now: first $1, then $2; scripts in ${SKILL_DIR}/scripts.\n")
	deploy.NoModelInvocation = true
	review := mk("review", "Review the change.\n")
	review.NoUserInvocation = true
	skills := []agent.Skill{deploy, review}

	var first *model.Request
	m := script(t,
		func(t *testing.T, req *model.Request) *model.Response {
			first = req
			return calls(agent.ActivateSkill, map[string]string{"skill_name": "deploy"})
		},
		func(t *testing.T, req *model.Request) *model.Response {
			return &model.Response{Message: model.Message{Content: "done"}}
		})
	a, err := agent.New(agent.Config{Model: m, Window: 100000, Tokenizer: runeCounter{}, Skills: skills, Packages: pkgs})
	if err != nil {
		t.Fatal(err)
	}
	events := collect(t, a, agent.Task{ID: "t1", Input: "/deploy staging web-1"})
	user := first.Messages[0].Content
	for _, want := range []string{"/deploy staging web-1", "Deploy staging web-1 now: first staging, then web-1; scripts in skills/deploy", "[The user invoked the skill deploy"} {
		if !strings.Contains(user, want) {
			t.Errorf("the first request's user message lacks %q:\n%s", want, user)
		}
	}
	if strings.Contains(first.System, "- deploy") || !strings.Contains(first.System, "- review") {
		t.Errorf("the catalog should list review and not deploy:\n%s", first.System)
	}
	for _, tl := range first.Tools {
		if tl.Name == agent.ActivateSkill && (strings.Contains(string(tl.Schema), `"deploy"`) || !strings.Contains(string(tl.Schema), `"review"`)) {
			t.Errorf("activate_skill's choices: %s", tl.Schema)
		}
	}
	if acts := payloads[agent.SkillActivated](ofType(events, agent.EventSkillActivated)); len(acts) != 1 || acts[0].Skill != "deploy" {
		t.Errorf("activations %+v", acts)
	}

	// The model alone cannot activate deploy; /review is not an invocation.
	m2 := script(t,
		do(agent.ActivateSkill, map[string]string{"skill_name": "deploy"}),
		func(t *testing.T, req *model.Request) *model.Response {
			last := req.Messages[len(req.Messages)-1]
			if !strings.Contains(last.Content, "not attached") {
				t.Errorf("the model activated a user-only skill: %q", last.Content)
			}
			if strings.Contains(req.Messages[0].Content, "[The user invoked") {
				t.Errorf("/review was taken as an invocation: %q", req.Messages[0].Content)
			}
			return &model.Response{Message: model.Message{Content: "done"}}
		})
	a2, _ := agent.New(agent.Config{Model: m2, Window: 100000, Tokenizer: runeCounter{}, Skills: skills, Packages: pkgs})
	if acts := ofType(collect(t, a2, agent.Task{ID: "t2", Input: "/review please"}), agent.EventSkillActivated); len(acts) != 0 {
		t.Errorf("activated %d skills", len(acts))
	}
}
