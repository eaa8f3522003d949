package agent

import (
	"context"

	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/placement"
)

// residency is how activated skills stay with the model: where an
// activation goes, what a request carries of them, what windowing and
// compaction must keep, and when they leave. Each placement is one
// implementation, picked once by newResidency, so that activation, tool
// calls and request building read the same for both and neither model's
// rules can leak into the other.
type residency interface {
	// activateDescription is what activate_skill tells the model it does.
	activateDescription() string
	// catalogIntro opens the catalog of skills in the system prompt.
	catalogIntro() string
	// again answers the activation of a skill that is already active.
	again(ctx context.Context, a *activation) string
	// admit makes room for a new activation within the skills budget:
	// it returns the skills that make way for it, or why it is refused
	// (nothing changes then).
	admit(a *activation) (unloaded []string, refused string)
	// activated settles an admitted activation once the skill is active
	// and returns activate_skill's result (before any note on its files).
	activated(ctx context.Context, a *activation, unloaded []string) string
	// protect names the skill whose activation a successful
	// activate_skill call's result holds, when windowing and compaction
	// must keep that result verbatim ("" when not).
	protect(call model.ToolCall) string
	// pins reports whether windowing keeps the conversation's first
	// message and the protected groups outside its cap.
	pins() bool
	// render returns what the active skills add to the system prompt
	// ("" for nothing) and its tokens.
	render() (string, int)
	// order lists the active skills, the order their tools are offered
	// and their pre-approvals matched in.
	order() []string
	// loaded lists the skills a request carries outside the conversation,
	// with their tokens.
	loaded() []placement.Item
}

// newResidency picks the run's residency model from its placement.
func newResidency(r *run) residency {
	if r.cfg.Placement == PlacementContext {
		return &contextResidency{r: r, set: placement.Loaded{Max: r.cfg.MaxLoaded, Budget: r.skillsBudget()}}
	}
	return &transcriptResidency{r: r, recorded: map[string]bool{}}
}

// skillsBudget is how many tokens all active skills may take together.
func (r *run) skillsBudget() int {
	return int(r.cfg.SkillsShare * float64(r.cfg.Window))
}
