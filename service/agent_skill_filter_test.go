package service_test

import (
	"slices"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store/storetest"
)

// TestListAgentsBySkill: agents.list with a skill (ID or slug) lists the
// agents that have it, by pages; a skill of another workspace is not
// found, as it is everywhere else.
func TestListAgentsBySkill(t *testing.T) {
	forDrivers(t, func(t *testing.T, open storetest.Opener) {
		e := newEnv(t, open, service.Config{}, nil)
		ctx := t.Context()
		newSkill := func(a service.Actor, name string) *service.SkillView {
			return must[*service.SkillView](t)(e.svc.CreateSkill(ctx, a, service.CreateSkillParams{Files: map[string]string{
				"SKILL.md": "---\nname: " + name + "\ndescription: A skill agents use.\n---\nBody.\n"}}))
		}
		pdf, lint, theirs := newSkill(e.member, "pdf"), newSkill(e.member, "lint"), newSkill(e.other, "theirs")
		for _, name := range []string{"a", "b", "c", "d"} {
			refs := []service.AgentSkillRef{{Skill: lint.ID}}
			if name != "c" {
				refs = append(refs, service.AgentSkillRef{Skill: pdf.ID})
			}
			must[*skilld.Agent](t)(e.svc.CreateAgent(ctx, e.member, service.AgentParams{Name: name, Skills: refs}))
		}
		var names []string
		for p := (service.ListAgentsParams{Skill: pdf.Slug, PageSize: 2}); ; {
			page := must[*service.AgentPage](t)(e.svc.ListAgents(ctx, e.viewer, p))
			if page.Total != 3 {
				t.Errorf("total %d", page.Total)
			}
			for _, a := range page.Items {
				names = append(names, a.Name)
			}
			if p.PageToken = page.NextPageToken; p.PageToken == "" {
				break
			}
		}
		if !slices.Equal(names, []string{"a", "b", "d"}) {
			t.Errorf("agents with pdf: %v", names)
		}
		all := must[*service.AgentPage](t)(e.svc.ListAgents(ctx, e.viewer, service.ListAgentsParams{PageSize: 2}))
		if _, err := e.svc.ListAgents(ctx, e.viewer, service.ListAgentsParams{Skill: pdf.ID, PageToken: all.NextPageToken}); skilld.ErrorCode(err) != skilld.EINVALID {
			t.Errorf("a page token of the unfiltered list: %v", err)
		}
		if _, err := e.svc.ListAgents(ctx, e.viewer, service.ListAgentsParams{Skill: theirs.ID}); skilld.ErrorCode(err) != skilld.ENOTFOUND {
			t.Errorf("another workspace's skill: %v", err)
		}
	})
}
