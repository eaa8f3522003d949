package web_test

import (
	"strings"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/store"
)

// TestAnalyticsSections: once a task that activated the skill finished,
// the skill page shows its analytics (in all and per version) and the
// agent page a row per attached skill, to a viewer.
func TestAnalyticsSections(t *testing.T) {
	e := newEnv(t)
	f := e.fixture()
	b := e.signedIn(e.viewerTok)
	if before := element(t, b.get("/ui/skills/"+f.skill.ID), "analytics-summary"); !strings.Contains(before, "In 0 finished tasks") {
		t.Errorf("skill analytics before any task:\n%s", before)
	}

	e.logEvent(f.task.ID, agent.TaskStarted{Skills: 1})
	e.logEvent(f.task.ID, agent.LLMCallStarted{Iteration: 1})
	e.logEvent(f.task.ID, agent.SkillActivated{Skill: "report", Tokens: 40, Placement: "transcript"})
	e.logEvent(f.task.ID, agent.LLMCallStarted{Iteration: 2})
	e.logEvent(f.task.ID, agent.SkillRefused{Skill: "report", Reason: "it needs 900 tokens and only 10 are left"})
	e.logEvent(f.task.ID, agent.TaskCompleted{Output: "all done", Iterations: 2})
	e.finish(f.task.ID)

	sp := b.get("/ui/skills/" + f.skill.ID)
	summary := element(t, sp, "analytics-summary")
	for _, want := range []string{"In 1 finished tasks", "offered in 1 (1 in full", "activated in 1 (1 activations, first at model call 1.0", "refused 1 times", "1 completed"} {
		if !strings.Contains(summary, want) {
			t.Errorf("skill analytics lack %q:\n%s", want, summary)
		}
	}
	if reasons := element(t, sp, "refusal-reasons"); !strings.Contains(reasons, "1 × it needs N tokens and only N are left") {
		t.Errorf("refusal reasons:\n%s", reasons)
	}
	if versions := element(t, sp, "analytics-versions"); !strings.Contains(versions, "<td>2 <code>") {
		t.Errorf("per version:\n%s", versions)
	}
	ap := b.get("/ui/agents/" + f.agent.ID)
	if rows := element(t, ap, "agent-analytics"); !strings.Contains(rows, ">report</a>") || !strings.Contains(rows, "<td>1 (1/0/0)</td>") {
		t.Errorf("agent analytics:\n%s", rows)
	}
}

// TestVersionEvals: a stored trigger eval result shows in the versions
// table, on the row of the version (package digest) it was run on, with
// the agent's name, the model and both scores.
func TestVersionEvals(t *testing.T) {
	e := newEnv(t)
	f := e.fixture()
	b := e.signedIn(e.viewerTok)
	if rows := element(t, b.get("/ui/skills/"+f.skill.ID), "versions"); strings.Count(rows, `<span class="muted">none</span>`) != 2 {
		t.Errorf("versions before any eval:\n%s", rows)
	}
	res := skilld.EvalResult{ID: "ev1", WorkspaceID: f.skill.WorkspaceID, AgentID: f.agent.ID, SkillID: f.skill.ID, Skill: f.skill.Name,
		SkillDigest: f.skill.Digest, Model: "openai:gpt-4o", Precision: 0.9, Recall: 0.75, Runs: 3, Queries: 4, Rates: []skilld.EvalRate{}, CreatedAt: time.Now()}
	if _, err := e.db.EvalResultCreate(t.Context(), &store.EvalResultCreateParams{Result: res}); err != nil {
		t.Fatal(err)
	}
	rows := element(t, b.get("/ui/skills/"+f.skill.ID), "versions")
	_, body, _ := strings.Cut(rows, "</thead>")
	current, older, _ := strings.Cut(body, "</tr>")
	if !strings.Contains(current, "writer · openai:gpt-4o: precision 0.90, recall 0.75") || !strings.Contains(current, "4 queries × 3 runs") {
		t.Errorf("the current version's row lacks its eval:\n%s", current)
	}
	if !strings.Contains(older, `<span class="muted">none</span>`) {
		t.Errorf("the older version's row shows an eval:\n%s", older)
	}
}
