package evals

import (
	"math"

	"github.com/skilld/skilld"
)

// z is the normal quantile of a 95% interval.
const z = 1.959963984540054

// Wilson is the 95% Wilson score interval of k successes in n trials:
// unlike k/n ± a normal error, it stays inside [0, 1] and is not empty at
// k = 0 or k = n, which is where a few runs of a trigger eval usually
// land. With no trials it is [0, 1]: nothing is known.
func Wilson(k, n int) (low, high float64) {
	if n <= 0 {
		return 0, 1
	}
	p, nf := float64(k)/float64(n), float64(n)
	d := 1 + z*z/nf
	center := (p + z*z/(2*nf)) / d
	half := z * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf)) / d
	return max(0, center-half), min(1, center+half)
}

// ratio is k/n, or empty when there is nothing to divide: the value of a
// score with no evidence against it.
func ratio(k, n int, empty float64) float64 {
	if n == 0 {
		return empty
	}
	return float64(k) / float64(n)
}

// SkillScore is one skill's trigger eval.
//
// Over every run of every query of the eval run: a true positive is a run
// of a query that expects the skill and activated it; a false negative one
// that expects it and did not; a false positive a run of any other query
// (one that should trigger nothing, or another skill) that activated it.
// Precision is TP/(TP+FP), 1 when the skill never triggered (it was never
// wrong); recall is TP/(TP+FN), 1 when no query expects the skill (it
// missed nothing). Both come with 95% Wilson intervals over those runs.
type SkillScore struct {
	Skill         string  `json:"skill"`
	Precision     float64 `json:"precision"`
	PrecisionLow  float64 `json:"precision_low"`
	PrecisionHigh float64 `json:"precision_high"`
	Recall        float64 `json:"recall"`
	RecallLow     float64 `json:"recall_low"`
	RecallHigh    float64 `json:"recall_high"`
	// Queries are the queries of the skill's own set and those expecting
	// it, with the share of runs that activated it.
	Queries []skilld.EvalRate `json:"queries"`
	// FalseTriggers counts, on those queries, the runs that activated
	// another skill than the expected one, by skill.
	FalseTriggers map[string]int `json:"false_triggers,omitempty"`
	// OtherTools counts the runs of those queries whose first call was
	// another tool than activate_skill.
	OtherTools int `json:"other_tools,omitempty"`
	// Tokens are those the runs of those queries spent.
	Tokens int64 `json:"tokens"`
}

// score scores skill over the outcomes of every case (outcomes[i] are
// case i's runs).
func score(skill string, cases []Case, outcomes [][]Outcome) SkillScore {
	s := SkillScore{Skill: skill, Queries: []skilld.EvalRate{}}
	var tp, fp, fn int
	for i, c := range cases {
		fired := 0
		for _, o := range outcomes[i] {
			if o.Skill == skill {
				fired++
			}
		}
		runs := len(outcomes[i])
		if c.Expect == skill {
			tp, fn = tp+fired, fn+runs-fired
		} else {
			fp += fired
		}
		if c.Owner != skill && c.Expect != skill {
			continue
		}
		r := skilld.EvalRate{Query: c.Query, ShouldTrigger: c.Expect == skill, Triggers: fired, Runs: runs, Rate: ratio(fired, runs, 0)}
		r.Low, r.High = Wilson(fired, runs)
		for _, o := range outcomes[i] {
			s.Tokens += o.Tokens
			switch {
			case o.OtherTool != "":
				s.OtherTools++
			case o.Skill != "" && o.Skill != skill && o.Skill != c.Expect:
				if r.Others == nil {
					r.Others = map[string]int{}
				}
				if s.FalseTriggers == nil {
					s.FalseTriggers = map[string]int{}
				}
				r.Others[o.Skill]++
				s.FalseTriggers[o.Skill]++
			}
		}
		s.Queries = append(s.Queries, r)
	}
	s.Precision = ratio(tp, tp+fp, 1)
	s.PrecisionLow, s.PrecisionHigh = Wilson(tp, tp+fp)
	s.Recall = ratio(tp, tp+fn, 1)
	s.RecallLow, s.RecallHigh = Wilson(tp, tp+fn)
	return s
}
