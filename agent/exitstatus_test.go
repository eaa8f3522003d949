package agent_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
)

// exitOf is a tool.result's exit status as text: "none" when it has none.
func exitOf(r agent.ToolResult) string {
	if r.ExitCode == nil {
		return "none"
	}
	b, _ := json.Marshal(*r.ExitCode)
	return string(b)
}

// TestToolResultExitCode: a shell call's tool.result carries its command's
// exit status, 0 included, so that readers need not parse the text; a call
// that ran no command (another tool, a refused command) has none. A failed
// command is no tool error: the model reads its output.
func TestToolResultExitCode(t *testing.T) {
	sb := newSandbox(t)
	m := script(t,
		do(agent.ToolShell, map[string]any{"command": "echo fine"},
			agent.ToolShell, map[string]any{"command": "echo boom >&2 && exit 3"},
			agent.ToolShell, map[string]any{"command": " "},
			agent.ToolListFiles, map[string]any{}),
		func(t *testing.T, req *model.Request) *model.Response {
			failed := req.Messages[len(req.Messages)-3]
			if failed.IsError || failed.Content != "boom\n[exit status 3]" {
				t.Errorf("the model reads the failed command as %+v", failed)
			}
			return finish("done")(t, req)
		})
	a, err := agent.New(agent.Config{Model: m, Window: 100000, Tokenizer: runeCounter{}, Sandbox: sb})
	if err != nil {
		t.Fatal(err)
	}
	results := payloads[agent.ToolResult](collect(t, a, agent.Task{ID: "t", Input: "x"}))
	var got []string
	for _, r := range results {
		got = append(got, r.Tool+":"+exitOf(r))
	}
	if want := "shell:0 shell:3 shell:none list_files:none"; strings.Join(got, " ") != want {
		t.Fatalf("exit statuses %q, want %q", strings.Join(got, " "), want)
	}
	if results[0].Failed() || !results[1].Failed() || results[1].IsError || !results[2].Failed() || results[3].Failed() {
		t.Errorf("Failed: %+v", results)
	}
	b, _ := json.Marshal(results[0])
	if !bytes.Contains(b, []byte(`"exit_code":0`)) {
		t.Errorf("a command that exited 0 must say so: %s", b)
	}
	b, _ = json.Marshal(results[3])
	if bytes.Contains(b, []byte(`exit_code`)) {
		t.Errorf("a call without a command has no exit_code: %s", b)
	}
}

// TestToolResultExitCodeResumed: a resumed run does not run a recorded
// command again, and the tool.result it then writes has the exit status the
// log recorded with the command's message.
func TestToolResultExitCodeResumed(t *testing.T) {
	sb := newSandbox(t)
	marker := "ran.txt"
	steps := func() []step {
		return []step{do(agent.ToolShell, map[string]any{"command": "echo x >> " + marker + "; exit 7"}), finish("done")}
	}
	log := &agent.MemoryLog{}
	a, err := agent.New(agent.Config{Model: script(t, steps()...), Window: 100000, Tokenizer: runeCounter{}, Sandbox: sb, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	collect(t, a, agent.Task{ID: "t", Input: "x"})
	// The log up to the shell call's message: the run stopped before its
	// tool.result was written.
	entries := log.Entries()
	cut := -1
	for i, e := range entries {
		if e.Kind == agent.KindMessage && bytes.Contains(e.Payload, []byte(`"role":"tool"`)) {
			if !bytes.Contains(e.Payload, []byte(`"exit_code":7`)) {
				t.Fatalf("the log's tool message lacks the exit status: %s", e.Payload)
			}
			cut = i + 1
			break
		}
	}
	if cut < 0 {
		t.Fatal("no tool message in the log")
	}
	resumed := agent.NewMemoryLog(entries[:cut])
	a, err = agent.New(agent.Config{Model: script(t, steps()...), Window: 100000, Tokenizer: runeCounter{}, Sandbox: sb, Log: resumed})
	if err != nil {
		t.Fatal(err)
	}
	results := payloads[agent.ToolResult](collect(t, a, agent.Task{ID: "t", Input: "x", Resume: entries[:cut]}))
	if len(results) != 1 || exitOf(results[0]) != "7" {
		t.Errorf("the resumed run's tool.result: %+v", results)
	}
	if b, err := os.ReadFile(filepath.Join(sb.HostPath(), marker)); err != nil || string(b) != "x\n" {
		t.Errorf("the command ran %q times (want once): %v", b, err)
	}
}

// finish is a step that ends the task with text.
func finish(text string) step {
	return func(*testing.T, *model.Request) *model.Response {
		return &model.Response{Message: model.Message{Content: text}}
	}
}
