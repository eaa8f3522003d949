package executor_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/storetest"
)

const notesSkill = `---
name: meeting-notes
description: Turns a meeting transcript into notes with decisions and actions. Use it for meeting transcripts.
---
List the decisions first, then the actions with their owners.
`

// lastToolContent is what the model read from the last tool call.
func lastToolContent(req *model.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == model.RoleTool {
			return req.Messages[i].Content
		}
	}
	return ""
}

// An agent with the skills toolset creates a skill; a later task of
// another agent activates it.
func TestSkillsToolsetCreatesThenActivates(t *testing.T) {
	f := newFixture(t, func(t *testing.T) store.Store { return storetest.OpenSQLite(t) })
	curator, err := f.svc.CreateAgent(t.Context(), f.actor, service.AgentParams{Name: "curator",
		Config: skilld.AgentConfig{Model: "test:m", Instruction: "Keep the skills tidy.", Toolsets: []string{skilld.ToolsetSkills}}})
	if err != nil {
		t.Fatal(err)
	}
	var created string
	f.model.steps = append(f.model.steps,
		call("skills_create", map[string]any{"files": map[string]string{"SKILL.md": notesSkill}}),
		func(_ context.Context, req *model.Request) (*model.Response, error) {
			created = lastToolContent(req)
			return answer("Created.")(nil, req)
		})
	task, err := f.svc.RunTask(t.Context(), f.actor, service.StartTaskParams{AgentRef: service.AgentRef{ID: curator.ID}, Input: "Add a skill for meeting notes."})
	if err != nil {
		t.Fatal(err)
	}
	f.wait(t, task.ID, skilld.TaskCompleted)
	if !strings.Contains(created, `"meeting-notes"`) {
		t.Fatalf("skills_create answered %q", created)
	}
	sk, err := f.svc.GetSkill(t.Context(), f.actor, service.GetSkillParams{SkillRef: service.SkillRef{ID: "meeting-notes"}})
	if err != nil {
		t.Fatalf("the skill the agent created: %v", err)
	}
	if !strings.Contains(sk.CreatedBy, "token:") {
		t.Errorf("created by %q, want the task's starter", sk.CreatedBy)
	}

	scribe, err := f.svc.CreateAgent(t.Context(), f.actor, service.AgentParams{Name: "scribe",
		Config: skilld.AgentConfig{Model: "test:m", Instruction: "Take notes."}, Skills: []service.AgentSkillRef{{Skill: "meeting-notes"}}})
	if err != nil {
		t.Fatal(err)
	}
	var body string
	f.model.steps = append(f.model.steps,
		call(agent.ActivateSkill, map[string]string{"skill_name": "meeting-notes"}),
		func(_ context.Context, req *model.Request) (*model.Response, error) {
			body = lastToolContent(req)
			return answer("Notes.")(nil, req)
		})
	task, err = f.svc.RunTask(t.Context(), f.actor, service.StartTaskParams{AgentRef: service.AgentRef{ID: scribe.ID}, Input: "Notes of today's meeting."})
	if err != nil {
		t.Fatal(err)
	}
	f.wait(t, task.ID, skilld.TaskCompleted)
	if !strings.Contains(body, "List the decisions first") {
		t.Errorf("activation gave %q", body)
	}
}

// The toolset's calls go through the tool policy and approvals like any
// tool's, and act with the starter's role.
func TestSkillsToolsetPolicyAndRole(t *testing.T) {
	f := newFixture(t, func(t *testing.T) store.Store { return storetest.OpenSQLite(t) })
	ag, err := f.svc.CreateAgent(t.Context(), f.actor, service.AgentParams{Name: "careful",
		Config: skilld.AgentConfig{Model: "test:m", Toolsets: []string{skilld.ToolsetSkills},
			Tools: skilld.ToolPolicy{RequireApproval: []string{"skills_create"}, Denied: []string{"skills_delete"}}}})
	if err != nil {
		t.Fatal(err)
	}
	offered := map[string]bool{}
	f.model.steps = append(f.model.steps,
		func(_ context.Context, req *model.Request) (*model.Response, error) {
			for _, ts := range req.Tools {
				offered[ts.Name] = true
			}
			return call("skills_create", map[string]any{"files": map[string]string{"SKILL.md": notesSkill}})(nil, req)
		},
		answer("Refused, fine."))
	task, err := f.svc.RunTask(t.Context(), f.actor, service.StartTaskParams{AgentRef: service.AgentRef{ID: ag.ID}, Input: "Tidy up."})
	if err != nil {
		t.Fatal(err)
	}
	f.wait(t, task.ID, skilld.TaskWaitingForApproval)
	if _, err := f.svc.DecideApproval(t.Context(), f.actor, service.DecideApprovalParams{TaskRef: service.TaskRef{ID: task.ID}, CallID: "c-skills_create", Approved: false}); err != nil {
		t.Fatal(err)
	}
	f.wait(t, task.ID, skilld.TaskCompleted)
	if !offered["skills_create"] || !offered["skills_list"] || offered["skills_delete"] {
		t.Errorf("tools offered %v: want the toolset without the denied skills_delete", offered)
	}
	if _, err := f.svc.GetSkill(t.Context(), f.actor, service.GetSkillParams{SkillRef: service.SkillRef{ID: "meeting-notes"}}); skilld.ErrorCode(err) != skilld.ENOTFOUND {
		t.Errorf("a refused skills_create left a skill: %v", err)
	}

	// A member's task cannot do what only admins may: its toolset acts
	// as the member.
	member := f.token(t, skilld.RoleMember)
	ag2, err := f.svc.CreateAgent(t.Context(), member, service.AgentParams{Name: "eager",
		Config: skilld.AgentConfig{Model: "test:m", Toolsets: []string{skilld.ToolsetSkills}}})
	if err != nil {
		t.Fatal(err)
	}
	var refused string
	f.model.steps = append(f.model.steps,
		call("skills_install", map[string]string{"item": "acme/none"}),
		func(_ context.Context, req *model.Request) (*model.Response, error) {
			refused = lastToolContent(req)
			return answer("ok")(nil, req)
		})
	task, err = f.svc.RunTask(t.Context(), member, service.StartTaskParams{AgentRef: service.AgentRef{ID: ag2.ID}, Input: "Install."})
	if err != nil {
		t.Fatal(err)
	}
	f.wait(t, task.ID, skilld.TaskCompleted)
	if !strings.HasPrefix(refused, "Error:") {
		t.Errorf("skills_install for a member answered %q", refused)
	}
}

// A task whose starter's token was revoked gets no toolset: its start
// fails, saying why, instead of acting for someone who lost the right.
func TestSkillsToolsetRevokedStarter(t *testing.T) {
	f := newFixture(t, func(t *testing.T) store.Store { return storetest.OpenSQLite(t) })
	member := f.token(t, skilld.RoleMember)
	ag, err := f.svc.CreateAgent(t.Context(), member, service.AgentParams{Name: "orphan",
		Config: skilld.AgentConfig{Model: "test:m", Toolsets: []string{skilld.ToolsetSkills}}})
	if err != nil {
		t.Fatal(err)
	}
	task, err := f.svc.StartTask(t.Context(), member, service.StartTaskParams{AgentRef: service.AgentRef{ID: ag.ID}, Input: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.svc.RevokeToken(t.Context(), f.actor, service.RevokeTokenParams{ID: member.TokenID}); err != nil {
		t.Fatal(err)
	}
	if err := f.exec.Start(t.Context(), task); err != nil {
		t.Fatal(err)
	}
	failed := f.wait(t, task.ID, skilld.TaskFailed)
	if failed.Error == nil || !strings.Contains(failed.Error.Message, "toolsets") || !strings.Contains(failed.Error.Message, "revoked") || failed.Error.Code != skilld.EFORBIDDEN {
		t.Errorf("error %+v", failed.Error)
	}
}

func TestSkillsToolsetUnknown(t *testing.T) {
	f := newFixture(t, func(t *testing.T) store.Store { return storetest.OpenSQLite(t) })
	_, err := f.svc.CreateAgent(t.Context(), f.actor, service.AgentParams{Name: "odd",
		Config: skilld.AgentConfig{Model: "test:m", Toolsets: []string{"email"}}})
	var se *skilld.Error
	if !errors.As(err, &se) || se.Code != skilld.EINVALID || len(se.Details) != 1 || se.Details[0].Field != "config.toolsets" {
		t.Errorf("unknown toolset: %v", err)
	}
}

// token makes a token of role in the fixture's workspace and returns its
// actor.
func (f *fixture) token(t *testing.T, role skilld.Role) service.Actor {
	t.Helper()
	tok, err := f.svc.CreateToken(t.Context(), f.actor, service.CreateTokenParams{Name: "t-" + string(role), Role: role})
	if err != nil {
		t.Fatal(err)
	}
	a, err := f.svc.Authenticate(t.Context(), tok.Secret)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
