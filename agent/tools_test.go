package agent_test

import (
	"strings"
	"testing"

	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/sandbox"
)

// TestSandboxTools drives the shell and file tools as a model would:
// paths under /workspace, paged reads, listings with placed skills, a
// refused write into skills/ and a command stopped by a limit.
func TestSandboxTools(t *testing.T) {
	pkgs := &agent.MemoryPackages{}
	csv := loadSkill(t, pkgs, exampleDir("csv-inspector"), "skill-csv")
	dir := pack.SandboxDir(csv.Name, csv.ID)
	sb := newSandbox(t)
	lines := ""
	for i := 1; i <= 10; i++ {
		lines += strings.Repeat("x", i) + "\n"
	}
	results := func(req *model.Request, n int) []model.Message { return req.Messages[len(req.Messages)-n:] }
	m := script(t,
		do(agent.ActivateSkill, map[string]string{"skill_name": "csv-inspector"},
			agent.ToolWriteFile, map[string]string{"path": "/workspace/notes/lines.txt", "content": lines}),
		func(t *testing.T, req *model.Request) *model.Response {
			if w := results(req, 1)[0]; w.IsError || w.Content != "wrote 65 bytes to notes/lines.txt" {
				t.Errorf("write_file: %+v", w)
			}
			return calls(agent.ToolReadFile, map[string]any{"path": "notes/lines.txt", "offset": 3, "limit": 2},
				agent.ToolReadFile, map[string]any{"path": "notes/lines.txt"},
				agent.ToolReadFile, map[string]any{"path": "notes/lines.txt", "offset": 11},
				agent.ToolListFiles, map[string]any{},
				agent.ToolWriteFile, map[string]string{"path": dir + "/SKILL.md", "content": "tampered"},
				agent.ToolShell, map[string]any{"command": "printf 'no newline'"})
		},
		func(t *testing.T, req *model.Request) *model.Response {
			r := results(req, 6)
			if r[0].Content != "xxx\nxxxx\n[lines 3–4 of 10; continue with offset 5]" {
				t.Errorf("paged read: %q", r[0].Content)
			}
			if r[1].Content != lines {
				t.Errorf("whole read: %q", r[1].Content)
			}
			if !r[2].IsError || !strings.Contains(r[2].Content, "past the end") {
				t.Errorf("read past the end: %+v", r[2])
			}
			for _, want := range []string{"notes/\n", "notes/lines.txt (65 bytes)", "skills/ (read-only)", dir + "/ (read-only)", dir + "/scripts/csv-summary.sh (", "bytes, read-only)"} {
				if !strings.Contains(r[3].Content, want) {
					t.Errorf("listing lacks %q:\n%s", want, r[3].Content)
				}
			}
			if !r[4].IsError || !strings.Contains(r[4].Content, "read-only") {
				t.Errorf("write into a skill: %+v", r[4])
			}
			if r[5].Content != "no newline\n[exit status 0]" {
				t.Errorf("shell: %q", r[5].Content)
			}
			return calls(agent.ToolShell, map[string]any{"command": "sleep 30", "timeout_s": 1},
				agent.ToolListFiles, map[string]any{"path": "notes/lines.txt"},
				agent.ToolShell, map[string]any{"command": " "})
		},
		func(t *testing.T, req *model.Request) *model.Response {
			r := results(req, 3)
			if !strings.Contains(r[0].Content, "[stopped: the command reached the time limit of 1s; it and every process it started were killed]") {
				t.Errorf("timeout: %q", r[0].Content)
			}
			if !r[1].IsError || !strings.Contains(r[1].Content, "is a file") {
				t.Errorf("listing a file: %+v", r[1])
			}
			if !r[2].IsError || !strings.Contains(r[2].Content, "command is empty") {
				t.Errorf("empty command: %+v", r[2])
			}
			return &model.Response{Message: model.Message{Content: "done"}}
		},
	)
	info := &sandbox.Info{Provider: "test", Isolated: false, Warning: "nothing is isolated"}
	a, err := agent.New(agent.Config{Model: m, Window: 128000, Tokenizer: runeCounter{}, Skills: []agent.Skill{csv}, Packages: pkgs, Sandbox: sb, SandboxInfo: info})
	if err != nil {
		t.Fatal(err)
	}
	events := collect(t, a, agent.Task{ID: "t", Input: "x"})
	ready := payloads[agent.SandboxReady](events)
	if len(ready) != 1 || ready[0].Provider != "test" || ready[0].Warning != "nothing is isolated" || events[1].Type != agent.EventSandboxReady {
		t.Errorf("sandbox.ready: %+v", ready)
	}
	if b, _ := sb.ReadFile(t.Context(), dir+"/SKILL.md", 1<<20); strings.Contains(string(b), "tampered") {
		t.Error("a skill's SKILL.md was overwritten")
	}
}
