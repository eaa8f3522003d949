package web_test

import (
	"strings"
	"testing"

	"github.com/skilld/skilld/agent"
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
