package skilld

import "time"

// EvalCase is one query of a trigger eval set: whether a model given the
// agent's catalog should activate a skill for it, and which.
type EvalCase struct {
	Query         string `json:"query"`
	ShouldTrigger bool   `json:"should_trigger"`
	// ExpectedSkill names the skill that should trigger. In a skill's own
	// evals/evals.json it defaults to the set's skill_name; in an agent's
	// set it is required when ShouldTrigger is true. With ShouldTrigger
	// false it is empty: no skill should trigger.
	ExpectedSkill string `json:"expected_skill,omitempty"`
}

// EvalResult is a stored trigger eval of one skill, as one agent's
// catalog and model present it: how often the model activated it where
// it should (recall) and how often an activation of it was right
// (precision), both between 0 and 1, over Queries queries asked Runs
// times each.
type EvalResult struct {
	ID          string     `json:"id"`
	WorkspaceID string     `json:"workspace_id"`
	AgentID     string     `json:"agent_id"`
	SkillID     string     `json:"skill_id"`
	Skill       string     `json:"skill"`
	SkillDigest string     `json:"skill_digest"`
	Model       string     `json:"model"`
	Precision   float64    `json:"precision"`
	Recall      float64    `json:"recall"`
	Runs        int        `json:"runs"`
	Queries     int        `json:"queries"`
	Rates       []EvalRate `json:"rates"`
	Tokens      int64      `json:"tokens"`
	CreatedAt   time.Time  `json:"created_at"`
}

// EvalRate is how often one query activated the skill of an EvalResult.
type EvalRate struct {
	Query         string `json:"query"`
	ShouldTrigger bool   `json:"should_trigger"`
	// Triggers of Runs runs activated the skill: Rate is their share and
	// Low and High bound it (a 95% Wilson score interval).
	Triggers int     `json:"triggers"`
	Runs     int     `json:"runs"`
	Rate     float64 `json:"rate"`
	Low      float64 `json:"low"`
	High     float64 `json:"high"`
	// Others counts the runs that activated another skill instead
	// (false triggers of other skills), by name.
	Others map[string]int `json:"others,omitempty"`
}
