package mcpserver

import (
	"slices"
	"strings"
	"testing"

	"github.com/skilld/skilld/service"
)

// TestMCPUserOnlySkill: a skill whose SKILL.md disables model invocation
// is not among activate_skill's choices and is not activated when a model
// names it; its files stay readable resources.
func TestMCPUserOnlySkill(t *testing.T) {
	f := newFixture(t)
	if _, err := f.svc.CreateSkill(t.Context(), f.admin, service.CreateSkillParams{Files: map[string]string{
		"SKILL.md": "---\nname: deploy\ndescription: Deploys. Use when asked to deploy.\ndisable-model-invocation: true\n---\nDeploy it.\n"}}); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, f, f.viewer, Options{})
	if enum := enumOf(t, cs); slices.Contains(enum, "deploy") || len(enum) == 0 {
		t.Errorf("activate_skill's choices: %v", enum)
	}
	if out, isErr := call(t, cs, "activate_skill", map[string]any{"skill_name": "deploy"}); !isErr || !strings.Contains(out, "no skill named") {
		t.Errorf("a model activated a user-only skill: %v %s", isErr, out)
	}
	if names := skillMDNames(t, cs); !slices.Contains(names, "deploy") {
		t.Errorf("its SKILL.md is no longer a resource: %v", names)
	}
}
