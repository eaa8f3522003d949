package agent

import (
	"slices"

	"github.com/skilld/skilld/agent/tool"
	"github.com/skilld/skilld/policy"
)

// withheldTools names the tools this run would offer but the tool policy
// denies, for task.started: an operator reading the log (or the metrics)
// sees at once that a policy shrank what the model was given. Go skills'
// tools count too, named "skill/tool"; control-flow tools are never
// withheld (see offer).
func (r *run) withheldTools(builtins []*tool.Tool) []string {
	out := []string{}
	check := func(name, shown string) {
		if !controlFlow(name) && r.cfg.Policy.Decide(name).Decision == policy.Deny {
			out = append(out, shown)
		}
	}
	disclosed := len(r.cfg.GoSkills) > 0 || slices.ContainsFunc(r.cfg.Skills, func(s Skill) bool { return s.Withheld == "" })
	if disclosed {
		check(ActivateSkill, ActivateSkill)
	}
	for _, t := range builtins {
		check(t.Name, t.Name)
	}
	for _, t := range r.cfg.Tools {
		check(t.Name, t.Name)
	}
	for _, gs := range r.cfg.GoSkills {
		for _, t := range gs.Tools {
			check(t.Name, gs.Name+"/"+t.Name)
		}
	}
	return out
}
