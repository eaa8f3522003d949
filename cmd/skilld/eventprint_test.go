package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
)

// TestPrintEnvironment: a skill's dependencies show as a line when ready
// and, when they failed, with the installer's last lines, not only in
// --json.
func TestPrintEnvironment(t *testing.T) {
	var out bytes.Buffer
	p := newPrinter(&env{stdout: &out, stderr: &bytes.Buffer{}}, false)
	for _, d := range []agent.SkillEnvironment{
		{Skill: "pdf", State: "preparing"},
		{Skill: "pdf", State: "building", Line: "Collecting pypdf", Lines: 1, ElapsedMS: 2000},
		{Skill: "pdf", State: "ready", EnvironmentLayer: &agent.EnvironmentLayer{Kinds: []string{"python"}, Key: "k", DurationMS: 2400}},
		{Skill: "docx", State: "preparing"},
		{Skill: "docx", State: "ready", EnvironmentLayer: &agent.EnvironmentLayer{Kinds: []string{"python", "node"}, Key: "k", Cached: true}},
		{Skill: "xlsx", State: "failed", Error: "installing the skill's dependencies failed (exit status 1)",
			Output: "Collecting no-such==9\nERROR: No matching distribution found for no-such==9\n"},
	} {
		p.event(agent.Event{Type: d.EventType(), Payload: d})
	}
	want := "skill pdf: dependencies ready (python, installed in 2.4s)\n" +
		"skill docx: dependencies ready (python and node, installed before)\n" +
		"skill xlsx: dependencies not installed: installing the skill's dependencies failed (exit status 1)\n" +
		"  Collecting no-such==9\n  ERROR: No matching distribution found for no-such==9\n"
	if out.String() != want {
		t.Errorf("printed:\n%s\nwant:\n%s", out.String(), want)
	}
}

// traceback is a failing script's output: 16 lines, the error last.
func traceback() string {
	var b strings.Builder
	b.WriteString("Traceback (most recent call last):\n")
	for i := 1; i <= 7; i++ {
		fmt.Fprintf(&b, "  File \"/workspace/skills/crashy/report.py\", line %d, in step%d\n    step%d(rows)\n", i*10, i, i+1)
	}
	b.WriteString(`ValueError: orders.csv has no column "total"` + "\n")
	return b.String()
}

// callEvents is a run as events: a command with "&&" (its arguments
// escaped as Go's JSON encoder writes them) that fails, a long successful
// one, another tool's call, and the model's answer.
func callEvents() []agent.Event {
	one, zero := 1, 0
	var seq strings.Builder
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&seq, "%d\n", i)
	}
	payloads := []agent.Payload{
		agent.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{
			{ID: "c1", Name: "shell", Arguments: json.RawMessage(`{"command":"cd skills/crashy-* \u0026\u0026 sh scripts/report.sh"}`)},
			{ID: "c2", Name: "shell", Arguments: json.RawMessage(`{"command":"seq 1 40","timeout_s":5}`)},
			{ID: "c3", Name: "read_file", Arguments: json.RawMessage(`{"path":"a \u0026 b.txt","offset":3}`)},
		}},
		agent.Message{Role: model.RoleTool, ToolCallID: "c1", ToolName: "shell", Content: traceback() + "[exit status 1]"},
		agent.ToolResult{CallRef: agent.CallRef{Tool: "shell", CallID: "c1"}, ExitCode: &one},
		agent.Message{Role: model.RoleTool, ToolCallID: "c2", ToolName: "shell", Content: seq.String() + "[exit status 0]"},
		agent.ToolResult{CallRef: agent.CallRef{Tool: "shell", CallID: "c2"}, ExitCode: &zero},
		agent.Message{Role: model.RoleTool, ToolCallID: "c3", ToolName: "read_file", IsError: true, Content: "Error: no such file"},
		agent.ToolResult{CallRef: agent.CallRef{Tool: "read_file", CallID: "c3"}, IsError: true, ErrorCode: "not_found"},
		agent.Message{Role: model.RoleAssistant, Content: "The report script failed: orders.csv has no total column."},
		agent.TaskCompleted{Output: "The report script failed: orders.csv has no total column."},
	}
	events := make([]agent.Event, len(payloads))
	for i, p := range payloads {
		events[i] = agent.Event{Type: p.EventType(), Seq: int64(i + 1), Payload: p}
	}
	return events
}

// TestPrintCalls: a call's arguments read as typed, a failed command shows
// its exit status and its last lines in full, a successful one is folded,
// and a task that completed despite a failure says so; -v shows every
// line.
func TestPrintCalls(t *testing.T) {
	show := func(verbose bool) string {
		var out bytes.Buffer
		p := newPrinter(&env{stdout: &out, stderr: &bytes.Buffer{}}, false)
		p.verbose = verbose
		for _, ev := range callEvents() {
			p.event(ev)
		}
		p.close()
		return out.String()
	}
	tb := strings.ReplaceAll(strings.TrimSuffix(traceback(), "\n"), "\n", "\n    ")
	want := "→ shell: cd skills/crashy-* && sh scripts/report.sh\n" +
		"→ shell (timeout_s=5): seq 1 40\n" +
		"→ read_file path=\"a & b.txt\" offset=3\n" +
		"  ← " + tb + "\n" +
		"  ✗ exit 1\n" +
		"  ← 1\n    2\n    3\n    4\n    5\n    6\n    … 34 more lines (-v shows them)\n" +
		"  ✓ exit 0\n" +
		"  ✗ Error: no such file\n" +
		"assistant: The report script failed: orders.csv has no total column.\n" +
		"✓ completed, but 2 tool calls failed (✗ above)\n"
	if got := show(false); got != want {
		t.Errorf("printed:\n%s\nwant:\n%s", got, want)
	}
	got := show(true)
	for i := 1; i <= 40; i++ {
		if !strings.Contains(got, fmt.Sprintf("    %d\n", i)) && !strings.Contains(got, fmt.Sprintf("  ← %d\n", i)) {
			t.Errorf("-v does not show line %d:\n%s", i, got)
			break
		}
	}
	if strings.Contains(got, "more lines") || !strings.Contains(got, tb) {
		t.Errorf("-v folds output:\n%s", got)
	}
}

// TestPrintLongFailure: a failed command's output over 30 lines shows its
// last 30, uncut however wide, and counts the rest.
func TestPrintLongFailure(t *testing.T) {
	var out bytes.Buffer
	p := newPrinter(&env{stdout: &out, stderr: &bytes.Buffer{}}, false)
	var content strings.Builder
	for i := 1; i <= 50; i++ {
		fmt.Fprintf(&content, "line %d %s\n", i, strings.Repeat("x", 300))
	}
	code := 2
	p.event(agent.Event{Type: agent.EventMessage, Payload: agent.Message{Role: model.RoleTool, ToolCallID: "c", ToolName: "shell", Content: content.String() + "[exit status 2]"}})
	p.event(agent.Event{Type: agent.EventToolResult, Payload: agent.ToolResult{CallRef: agent.CallRef{Tool: "shell", CallID: "c"}, ExitCode: &code}})
	got := out.String()
	if !strings.HasPrefix(got, "  ← … 20 earlier lines (-v shows them)\n    line 21 ") || !strings.Contains(got, "line 50 "+strings.Repeat("x", 300)+"\n") ||
		strings.Contains(got, "line 20 ") || !strings.HasSuffix(got, "  ✗ exit 2\n") {
		t.Errorf("printed:\n%s", got)
	}
}

// TestPrintResultWithoutEvent: a log written before tool.result carried an
// exit status still shows the result, when the next event comes.
func TestPrintResultWithoutEvent(t *testing.T) {
	var out bytes.Buffer
	p := newPrinter(&env{stdout: &out, stderr: &bytes.Buffer{}}, false)
	p.event(agent.Event{Type: agent.EventMessage, Payload: agent.Message{Role: model.RoleTool, ToolCallID: "c", ToolName: "shell", Content: "hi\n[exit status 0]"}})
	p.event(agent.Event{Type: agent.EventTaskCompleted, Payload: agent.TaskCompleted{}})
	if got, want := out.String(), "  ← hi\n    [exit status 0]\n✓ completed\n"; got != want {
		t.Errorf("printed %q, want %q", got, want)
	}
}
