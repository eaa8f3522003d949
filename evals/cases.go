package evals

import "github.com/skilld/skilld"

// Case is one query of an eval run, as scored: Expect is the skill that
// should trigger ("" for none) and Owner the skill whose set it came from
// ("" for the agent's own set).
type Case struct {
	Query  string
	Expect string
	Owner  string
}

// SkillCases are the cases of a skill's set: a query that should trigger
// expects the case's expected_skill, or the set's skill.
func SkillCases(s *Set) []Case {
	out := make([]Case, len(s.Evals))
	for i, c := range s.Evals {
		out[i] = Case{Query: c.Query, Owner: s.SkillName}
		if c.ShouldTrigger {
			out[i].Expect = c.ExpectedSkill
			if out[i].Expect == "" {
				out[i].Expect = s.SkillName
			}
		}
	}
	return out
}

// AgentCases are the cases of an agent's own set.
func AgentCases(cases []skilld.EvalCase) []Case {
	out := make([]Case, len(cases))
	for i, c := range cases {
		out[i] = Case{Query: c.Query}
		if c.ShouldTrigger {
			out[i].Expect = c.ExpectedSkill
		}
	}
	return out
}
