package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/placement"
)

// transcriptResidency is transcript placement: an activation's result is
// the skill's content, in the conversation, pinned there for the rest of
// the run; nothing is ever unloaded and requests carry no context block.
type transcriptResidency struct {
	r *run
	// tokens is what all activations take together.
	tokens int
	// recorded holds the skills whose activation result is in the
	// transcript already, so a repeated activation is not protected twice.
	recorded map[string]bool
}

var _ residency = (*transcriptResidency)(nil)

func (t *transcriptResidency) activateDescription() string {
	return "Load a skill's instructions and place its files in the working directory. Call it before working on a task a skill covers."
}

func (t *transcriptResidency) catalogIntro() string { return catalogIntroTranscript }

func (t *transcriptResidency) again(_ context.Context, a *activation) string {
	return fmt.Sprintf("Skill '%s' is already active: its instructions are earlier in this conversation.", a.name)
}

// admit refuses an activation that would take the activations past the
// skills budget: the earlier ones are pinned and cannot make way.
func (t *transcriptResidency) admit(a *activation) ([]string, string) {
	limit := t.r.skillsBudget()
	if t.tokens+a.tokens > limit {
		return nil, fmt.Sprintf("it needs %d tokens and only %d of the %d-token skills budget are left", a.tokens, limit-t.tokens, limit)
	}
	return nil, ""
}

func (t *transcriptResidency) activated(_ context.Context, a *activation, _ []string) string {
	t.tokens += a.tokens
	return a.content
}

// protect returns the skill a successful activate_skill call just
// activated ("" when it was already active), so its result is kept as
// protected skill content.
func (t *transcriptResidency) protect(call model.ToolCall) string {
	var p struct {
		SkillName string `json:"skill_name"`
	}
	json.Unmarshal(call.Arguments, &p)
	if t.r.active[p.SkillName] != nil && !t.recorded[p.SkillName] {
		t.recorded[p.SkillName] = true
		return p.SkillName
	}
	return ""
}

func (t *transcriptResidency) pins() bool { return true }

func (t *transcriptResidency) render() (string, int) { return "", 0 }

// order is by name: activations never leave, so no order of use matters.
func (t *transcriptResidency) order() []string {
	names := make([]string, 0, len(t.r.active))
	for n := range t.r.active {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func (t *transcriptResidency) loaded() []placement.Item { return nil }
