package main

import (
	"strings"
	"testing"
)

// TestSkillsStats: after the analyst's task activated csv-inspector, the
// stats count it; a second skill attached and never activated is listed
// at the end as offered and never activated; --agent, --from and --json
// work; a bad time is a usage error naming the flag.
func TestSkillsStats(t *testing.T) {
	s := newTaskServer(t)
	s.analyst(t)
	s.ok(t, "skills", "create", examples+"/release-notes")
	s.ok(t, "agents", "update", "analyst", "--skill", "csv-inspector", "--skill", "release-notes")
	task := s.okJSON(t, "tasks", "start", "analyst", "How many rows has orders.csv?")
	s.waitStatus(t, task["id"].(string), "completed")

	out := s.ok(t, "skills", "stats")
	var csv string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "csv-inspector ") {
			csv = line
		}
	}
	// NAME TASKS OFFERED FULL/SHORT/NAME UNLISTED HIDDEN WITHHELD ACTIVATED ACTIVATIONS FIRST CALL REFUSALS UNLOADS
	if got := strings.Join(strings.Fields(csv), " "); got != "csv-inspector 1 1 1/0/0 0 0 0 1 1 1.0 0 0" {
		t.Errorf("skills stats row: %q\n%s", got, out)
	}
	if _, never, _ := strings.Cut(out, "Offered but never activated"); !strings.Contains(never, "release-notes: offered in 1 tasks (1 in full") || strings.Contains(never, "csv-inspector") {
		t.Errorf("skills stats:\n%s", out)
	}
	got := s.okJSON(t, "skills", "stats", "--agent", "analyst", "--from", "2000-01-01T00:00:00Z")
	if items := got["items"].([]any); len(items) != 2 {
		t.Errorf("skills stats --agent --json: %v", got)
	}
	if out := s.ok(t, "skills", "stats", "--from", "2999-01-01T00:00:00Z"); strings.Contains(out, "never activated") || !strings.Contains(out, "csv-inspector") {
		t.Errorf("skills stats from the future:\n%s", out)
	}
	if code, _, errOut := s.cli(t, "skills", "stats", "--to", "tomorrow"); code != exitUsage || !strings.Contains(errOut, "-to") {
		t.Errorf("a bad --to: exit %d %s", code, errOut)
	}
}
