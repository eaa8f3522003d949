package agent

import (
	"context"

	"github.com/skilld/skilld/agent/tool"
)

// GoSkill is a skill defined in Go. It shares the catalog and
// activate_skill with package skills; unlike them it renders its own
// entries and brings tools.
//
// In context placement, Render runs at every load and before every request
// while the skill is loaded, and its entries make up the skill's part of
// <current_context>; its tools are offered only while it is loaded (a call
// after an unload is answered "Unknown tool"). In transcript placement the
// entries rendered at activation are the activation's result, and the
// tools stay for the run.
type GoSkill struct {
	Name        string
	Description string
	// Init returns a fresh per-load state: called at each load, dropped at
	// unload, so loading the skill again starts from it. Nil: no state.
	Init func() any
	// Render returns the entries the skill shows the model, from its state
	// and the store.
	Render func(c *SkillContext) []string
	// Tools are the skill's tools. A call reaches the skill's state and
	// the store with SkillContextOf(ctx).
	Tools []*tool.Tool
	// AllowedTools pre-approve calls while the skill is active, in the
	// syntax of SKILL.md's allowed-tools ("Bash(git:*) Read"); they never
	// override a deny rule.
	AllowedTools []string
}

// SkillContext is what a loaded Go skill's Render and tools work with.
type SkillContext struct {
	// Skill is the skill's name.
	Skill string
	// State is this load's state (from Init); tools may replace it.
	State any
	// Store is the agent store: it outlives loads.
	Store *KVStore
}

type skillContextKey struct{}

// SkillContextOf returns the SkillContext of the Go skill whose tool is
// being called (nil outside such a call).
func SkillContextOf(ctx context.Context) *SkillContext {
	c, _ := ctx.Value(skillContextKey{}).(*SkillContext)
	return c
}
