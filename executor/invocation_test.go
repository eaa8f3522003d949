package executor_test

import (
	"context"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/service"
)

// TestClientInvocationFields: stored skills that Claude Code's
// disable-model-invocation or Codex's agents/openai.yaml keep from the
// model stay out of a task's catalog, and "/deploy prod web" in a task's
// input activates the first with its arguments filled in.
func TestClientInvocationFields(t *testing.T) {
	f := newFixture(t, sqlite)
	deploy, err := f.svc.CreateSkill(t.Context(), f.actor, service.CreateSkillParams{Files: map[string]string{
		"SKILL.md": "---\nname: deploy\ndescription: Deploys a service. Use when asked to deploy.\ndisable-model-invocation: true\n---\nDeploy to $1 the service $2 ($ARGUMENTS).\n"}})
	if err != nil {
		t.Fatal(err)
	}
	release, err := f.svc.CreateSkill(t.Context(), f.actor, service.CreateSkillParams{Files: map[string]string{
		"SKILL.md":           "---\nname: release\ndescription: Cuts a release. Use when asked to release.\n---\nRelease.\n",
		"agents/openai.yaml": "policy:\n  allow_implicit_invocation: false\n"}})
	if err != nil {
		t.Fatal(err)
	}
	notes, err := f.svc.CreateSkill(t.Context(), f.actor, service.CreateSkillParams{Files: map[string]string{
		"SKILL.md": "---\nname: notes\ndescription: Takes notes. Use when asked to note something.\n---\nNote it.\n"}})
	if err != nil {
		t.Fatal(err)
	}
	ag, err := f.svc.CreateAgent(t.Context(), f.actor, service.AgentParams{Name: "ops", Config: skilld.AgentConfig{Model: "test:m"},
		Skills: []service.AgentSkillRef{{Skill: deploy.ID}, {Skill: release.ID}, {Skill: notes.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	var first *model.Request
	f.model.steps = append(f.model.steps, func(_ context.Context, req *model.Request) (*model.Response, error) {
		first = req
		return &model.Response{Message: model.Message{Content: "deployed"}, StopReason: model.StopEnd}, nil
	})
	task, err := f.svc.RunTask(t.Context(), f.actor, service.StartTaskParams{AgentRef: service.AgentRef{ID: ag.ID}, Input: "/deploy prod web"})
	if err != nil {
		t.Fatal(err)
	}
	f.wait(t, task.ID, skilld.TaskCompleted)
	if !strings.Contains(first.System, "- notes") || strings.Contains(first.System, "- deploy") || strings.Contains(first.System, "- release") {
		t.Errorf("the catalog should list notes only:\n%s", first.System)
	}
	if msg := first.Messages[0].Content; !strings.Contains(msg, "Deploy to prod the service web (prod web).") {
		t.Errorf("the invocation's instructions are not in the user message:\n%s", msg)
	}
	for _, tl := range first.Tools {
		if tl.Name == agent.ActivateSkill && strings.Contains(string(tl.Schema), "deploy") {
			t.Errorf("activate_skill offers deploy: %s", tl.Schema)
		}
	}
}
