package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilld/skilld/sandbox/bwrap/bwraptest"
)

// crashySkill writes a skill whose script prints a Python-like traceback
// of 16 lines and exits 1, and the scripted model that runs it: it
// activates the skill, runs a long command that succeeds, then the script
// (with "&&"), and answers.
func crashySkill(t *testing.T) (dir, script string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "crashy")
	writeFiles(t, dir, map[string]string{
		"SKILL.md": "---\nname: crashy\ndescription: Reports on orders.csv. Use for order reports.\n---\n\nRun `sh scripts/report.sh`.\n",
		"scripts/report.sh": "#!/bin/sh\necho 'Traceback (most recent call last):'\n" +
			"for i in 1 2 3 4 5 6 7; do\n" +
			"  echo \"  File \\\"/workspace/skills/crashy/report.py\\\", line $((i * 10)), in step$i\"\n" +
			"  echo \"    step$((i + 1))(rows)\"\ndone\n" +
			"echo 'ValueError: orders.csv has no column \"total\"' >&2\nexit 1\n",
	})
	script = filepath.Join(t.TempDir(), "crashy.json")
	steps := `[
 {"tool_calls": [{"name": "activate_skill", "arguments": {"skill_name": "crashy"}}]},
 {"tool_calls": [{"name": "shell", "arguments": {"command": "seq 1 40"}}]},
 {"tool_calls": [{"name": "shell", "arguments": {"command": "cd skills/crashy-* && sh scripts/report.sh"}}]},
 {"text": "The report failed: orders.csv has no total column."}
]`
	if err := os.WriteFile(script, []byte(steps), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, script
}

// checkFailureShown holds a trace of the crashy run to what a person must
// see: the command as typed, the traceback's end, the exit status, the
// long output folded, and the completion with its failure.
func checkFailureShown(t *testing.T, out string) {
	t.Helper()
	for _, want := range []string{
		"→ shell: cd skills/crashy-* && sh scripts/report.sh\n",
		"  ← Traceback (most recent call last):\n",
		`    ValueError: orders.csv has no column "total"` + "\n",
		"  ✗ exit 1\n",
		"  ✓ exit 0\n",
		"    … 34 more lines (-v shows them)\n",
		"assistant: The report failed: orders.csv has no total column.\n",
		"✓ completed, but 1 tool call failed (✗ above)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the trace lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, `\u0026`) || strings.Contains(out, "    40\n") {
		t.Errorf("escaped arguments or unfolded output:\n%s", out)
	}
}

// TestFollowShowsFailure: a server task whose skill script fails is
// followed with tasks start --follow: the failure is in the trace, not
// only in --json; tasks follow -v shows every line.
func TestFollowShowsFailure(t *testing.T) {
	s := newTaskServer(t)
	dir, script := crashySkill(t)
	s.ok(t, "skills", "create", dir)
	s.ok(t, "agents", "create", "reporter", "--model", "scripted:"+script, "--context-window", "100000", "--skill", "crashy")

	code, out, errOut := s.cli(t, "tasks", "start", "reporter", "Report on orders.csv", "--follow")
	if code != exitOK {
		t.Fatalf("tasks start --follow: exit %d\n%s%s", code, out, errOut)
	}
	checkFailureShown(t, out)
	id := strings.Fields(strings.TrimPrefix(errOut, "task: "))[0]

	verbose := s.ok(t, "tasks", "follow", id, "-v")
	for _, want := range []string{"  ← 1\n", "    39\n", "    40\n", "  ✗ exit 1\n", `    ValueError: orders.csv has no column "total"` + "\n"} {
		if !strings.Contains(verbose, want) {
			t.Errorf("tasks follow -v lacks %q:\n%s", want, verbose)
		}
	}
	if strings.Contains(verbose, "more lines") {
		t.Errorf("tasks follow -v folds output:\n%s", verbose)
	}
	// The JSON stays for machines: the event with the exit status.
	if _, jsonOut, _ := s.cli(t, "tasks", "follow", id, "--json"); !strings.Contains(jsonOut, `"type":"tool.result","task_id":"`+id) ||
		!strings.Contains(jsonOut, `"exit_code":1`) {
		t.Errorf("tasks follow --json lacks the tool.result with its exit_code:\n%s", jsonOut)
	}
}

// TestRunShowsFailure: skilld run shows the same trace.
func TestRunShowsFailure(t *testing.T) {
	t.Parallel()
	bwraptest.Require(t)
	dir, script := crashySkill(t)
	code, out, errOut := runCLI(t, "run", "--skills", dir, "--model", "scripted:"+script, "--context-window", "100000",
		"--cache-dir", t.TempDir(), "Report on orders.csv")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	checkFailureShown(t, out)
}
