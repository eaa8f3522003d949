package httpapi_test

import (
	"net/url"
	"testing"

	"github.com/skilld/skilld/agent"
)

// TestSkillAnalyticsOverHTTP: a task run by the executor shows in the
// workspace's skill analytics, which a viewer may read: every skill
// listed (zeros included) in the documented shape; an agent filter; a bad
// time is a 400 naming its parameter; deleting the task takes its counts.
func TestSkillAnalyticsOverHTTP(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *testEnv) {
		m := e.withExecutor(t)
		ws := "/v1/workspaces/default"
		for _, name := range []string{"used", "idle", "loose"} {
			e.must(201, "POST", ws+"/skills", e.admin, map[string]any{"files": map[string]string{"SKILL.md": skillMD(name, "Use "+name+" for tests.")}})
		}
		e.must(201, "POST", ws+"/agents", e.admin, map[string]any{"name": "bot", "config": map[string]any{"model": "test:m"},
			"skills": []map[string]string{{"skill": "used"}, {"skill": "idle"}}})
		m.push(toolCall("c1", agent.ActivateSkill, map[string]string{"skill_name": "used"}))
		m.push(final("done"))
		task := e.must(201, "POST", ws+"/agents/bot/tasks", e.admin, map[string]any{"input": "go"})
		waitTask(t, e, task["id"].(string), "completed")

		viewer := e.token("default", "reader", "viewer")
		items := func(query string) map[string]map[string]any {
			t.Helper()
			out := map[string]map[string]any{}
			for _, it := range e.must(200, "GET", ws+"/analytics/skills"+query, viewer, nil)["items"].([]any) {
				out[it.(map[string]any)["name"].(string)] = it.(map[string]any)
			}
			return out
		}
		got := items("")
		if len(got) != 3 {
			t.Fatalf("listed %d skills, want 3: %v", len(got), got)
		}
		used := got["used"]
		for k, want := range map[string]any{"offered": 1.0, "offered_full": 1.0, "activations": 1.0, "tasks_activated": 1.0, "first_iteration": 1.0,
			"refusals": 0.0, "withheld": 0.0, "unloads": 0.0, "offered_never_activated": false} {
			if used[k] != want {
				t.Errorf("used: %s = %v, want %v", k, used[k], want)
			}
		}
		if !sameJSON(t, used["outcomes"], map[string]any{"completed": 1, "failed": 0, "cancelled": 0}) || len(used["versions"].([]any)) != 1 {
			t.Errorf("used: %v", used)
		}
		if idle := got["idle"]; idle["offered"] != 1.0 || idle["activations"] != 0.0 || idle["offered_never_activated"] != true || idle["first_iteration"] != nil {
			t.Errorf("idle: %v", idle)
		}
		if loose := got["loose"]; loose["offered"] != 0.0 || loose["skill_id"] == "" || !sameJSON(t, loose["refusal_reasons"], map[string]any{}) {
			t.Errorf("loose: %v", loose)
		}
		if byAgent := items("?agent=bot"); len(byAgent) != 2 || byAgent["loose"] != nil {
			t.Errorf("the agent's skills: %v", byAgent)
		}
		if later := items("?from=" + url.QueryEscape("2999-01-01T00:00:00Z")); later["used"]["offered"] != 0.0 {
			t.Errorf("from the future: %v", later["used"])
		}
		for param, query := range map[string]string{"from": "?from=monday", "to": "?to=2026-01-01"} {
			r := e.request("GET", ws+"/analytics/skills"+query, viewer, nil)
			if r.status != 400 || r.errorCode(t) != "invalid" || r.errorField(t) != param {
				t.Errorf("%s: %d %s", query, r.status, r.body)
			}
		}
		e.must(204, "DELETE", ws+"/tasks/"+task["id"].(string), e.admin, nil)
		if used := items("")["used"]; used["offered"] != 0.0 || used["activations"] != 0.0 {
			t.Errorf("used after its task was deleted: %v", used)
		}
	})
}
