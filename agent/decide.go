package agent

import (
	"context"
	"encoding/json"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/model"
)

// Decision is what a model does first with a query, given a run's
// catalog: activate a skill, call another tool, or answer.
type Decision struct {
	// Skill is the skill the first activate_skill call names; "" when the
	// model did not activate one first.
	Skill string `json:"skill,omitempty"`
	// OtherTool names the first tool called when it was not
	// activate_skill (search_skills, shell, …): the decision stops there,
	// and Skill is "".
	OtherTool string `json:"other_tool,omitempty"`
	// Usage is what the provider reported the call cost.
	Usage model.Usage `json:"usage"`
}

// Decide asks the model of cfg one question: which skill, if any, it
// activates for query. The request is the first one a run of cfg with
// query as its input sends — same system prompt and catalog, same tools
// offered by the same policy — because it is built by the run's own code
// (begin, fit); the answer is read and nothing more happens: no tool runs,
// nothing is placed, and the log is an in-memory one thrown away.
//
// When the answer calls several tools, an activate_skill call among them
// decides; otherwise the first call is recorded as OtherTool. A failed
// start (a config New refuses, a query that does not fit the window) or a
// failed call is returned as the error.
func Decide(ctx context.Context, cfg Config, query string) (Decision, error) {
	a, err := New(cfg)
	if err != nil {
		return Decision{}, err
	}
	cfg = a.cfg
	cfg.Log, cfg.Outputs = &MemoryLog{}, &MemoryOutputs{}
	var failed error
	r := newRun(cfg, Task{ID: "decide", Input: query}, func(ev Event, err error) bool {
		if f, ok := ev.Payload.(TaskFailed); ok {
			failed = f.Cause
			if failed == nil {
				failed = &skilld.Error{Code: f.Code, Message: f.Error}
			}
		}
		if err != nil {
			failed = err
		}
		return true
	})
	if !r.begin(ctx) {
		return Decision{}, failed
	}
	req, _, err := r.fit(ctx)
	if err != nil {
		return Decision{}, err
	}
	resp, err := r.ask(ctx, StepModel, req)
	if err != nil {
		return Decision{}, err
	}
	return decisionOf(resp), nil
}

// decisionOf reads a model's first answer as a Decision.
func decisionOf(resp *model.Response) Decision {
	d := Decision{Usage: resp.Usage}
	for _, c := range resp.Message.ToolCalls {
		if c.Name != ActivateSkill {
			continue
		}
		var p struct {
			SkillName string `json:"skill_name"`
		}
		if json.Unmarshal(c.Arguments, &p) == nil && p.SkillName != "" {
			d.Skill = p.SkillName
			return d
		}
	}
	if len(resp.Message.ToolCalls) > 0 {
		d.OtherTool = resp.Message.ToolCalls[0].Name
	}
	return d
}
