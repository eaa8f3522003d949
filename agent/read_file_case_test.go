package agent_test

import (
	"strings"
	"testing"

	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/sandbox"
)

// TestReadFileCase: read_file reads the one file a path misses only by
// letter case and says so after the text; when two files differ from the
// path only by case, it reads neither and names both; a path that matches
// nothing is not found as before.
func TestReadFileCase(t *testing.T) {
	pkgs := &agent.MemoryPackages{}
	csv := loadSkill(t, pkgs, exampleDir("csv-inspector"), "skill-csv")
	dir := pack.SandboxDir(csv.Name, csv.ID)
	sb := newSandbox(t)
	results := func(req *model.Request, n int) []model.Message { return req.Messages[len(req.Messages)-n:] }
	m := script(t,
		do(agent.ActivateSkill, map[string]string{"skill_name": "csv-inspector"},
			agent.ToolWriteFile, map[string]string{"path": "notes/a.txt", "content": "lower\n"},
			agent.ToolWriteFile, map[string]string{"path": "notes/A.txt", "content": "upper\n"}),
		func(t *testing.T, req *model.Request) *model.Response {
			return calls(agent.ToolReadFile, map[string]any{"path": dir + "/skill.MD", "limit": 1},
				agent.ToolReadFile, map[string]any{"path": "notes/a.TXT"},
				agent.ToolReadFile, map[string]any{"path": "notes/b.txt"})
		},
		func(t *testing.T, req *model.Request) *model.Response {
			r := results(req, 3)
			if r[0].IsError || !strings.HasPrefix(r[0].Content, "---\n") ||
				!strings.HasSuffix(r[0].Content, "; continue with offset 2]\n[no file "+dir+"/skill.MD: this is "+dir+"/SKILL.md]") {
				t.Errorf("a case-only miss: %+v", r[0])
			}
			if !r[1].IsError || !strings.Contains(r[1].Content, `did you mean "notes/A.txt" or "notes/a.txt"?`) {
				t.Errorf("two files that differ only by case: %+v", r[1])
			}
			if !r[2].IsError || !strings.Contains(r[2].Content, `no file or folder "notes/b.txt"`) || strings.Contains(r[2].Content, "did you mean") {
				t.Errorf("a plain miss: %+v", r[2])
			}
			return &model.Response{Message: model.Message{Content: "done"}}
		},
	)
	a, err := agent.New(agent.Config{Model: m, Window: 128000, Tokenizer: runeCounter{}, Skills: []agent.Skill{csv}, Packages: pkgs, Sandbox: sb,
		SandboxInfo: &sandbox.Info{Provider: "test"}})
	if err != nil {
		t.Fatal(err)
	}
	collect(t, a, agent.Task{ID: "t", Input: "x"})
}
