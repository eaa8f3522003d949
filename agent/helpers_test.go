package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/policy"
	"github.com/skilld/skilld/sandbox"
	"github.com/skilld/skilld/sandbox/unsafehost"
)

// runeCounter counts a token per four characters: deterministic, and close
// enough to real tokenizers for budget tests.
type runeCounter struct{}

func (runeCounter) Count(s string) int { return (len([]rune(s)) + 3) / 4 }

// step answers one model request; it may inspect the request.
type step func(t *testing.T, req *model.Request) *model.Response

// script is a model playing steps in order, each given t; it records every
// request it received.
func script(t *testing.T, steps ...step) *model.Scripted {
	ss := make([]model.Step, len(steps))
	for i, st := range steps {
		ss[i] = model.Step{Func: func(req *model.Request) (*model.Response, error) { return st(t, req), nil }}
	}
	return model.NewScripted(ss...)
}

// calls makes an assistant response calling tools: name, args pairs.
func calls(pairs ...any) *model.Response {
	var tcs []model.ToolCall
	for i := 0; i < len(pairs); i += 2 {
		tcs = append(tcs, model.Call(pairs[i].(string), pairs[i+1]))
	}
	return &model.Response{Message: model.Message{ToolCalls: tcs}, Usage: model.Usage{PromptTokens: 100, CompletionTokens: 10}}
}

func do(pairs ...any) step {
	return func(*testing.T, *model.Request) *model.Response { return calls(pairs...) }
}

// loadSkill reads an example skill from disk into packages and returns its
// snapshot entry.
func loadSkill(t *testing.T, pkgs *agent.MemoryPackages, dir, id string) agent.Skill {
	t.Helper()
	p, err := pack.ReadDir(t.Context(), dir, pack.ArchiveLimits())
	if err != nil {
		t.Fatal(err)
	}
	return skillFromPackage(t, pkgs, p, id)
}

func skillFromPackage(t *testing.T, pkgs *agent.MemoryPackages, p *pack.Package, id string) agent.Skill {
	t.Helper()
	f, _ := p.File("SKILL.md")
	name, desc := frontmatter(string(f.Data))
	var files []string
	for _, e := range p.Entries() {
		files = append(files, e.Path)
	}
	return agent.Skill{ID: id, Name: name, Description: desc, Digest: pkgs.Add(p), Files: files}
}

// frontmatter pulls name and description out of a simple SKILL.md.
func frontmatter(md string) (name, desc string) {
	for _, line := range strings.Split(md, "\n") {
		if v, ok := strings.CutPrefix(line, "name: "); ok && name == "" {
			name = v
		}
		if v, ok := strings.CutPrefix(line, "description: "); ok && desc == "" {
			desc = v
		}
	}
	return name, desc
}

// collect runs a task to the end and returns its events.
func collect(t *testing.T, a *agent.Agent, task agent.Task) []agent.Event {
	t.Helper()
	var events []agent.Event
	for ev, err := range a.Run(t.Context(), task) {
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		events = append(events, ev)
	}
	return events
}

func ofType(events []agent.Event, typ string) []agent.Event {
	var out []agent.Event
	for _, e := range events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func exampleDir(name string) string { return filepath.Join("..", "examples", "skills", name) }

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// newSandbox returns a sandbox for runtime tests: unsafehost, whose real
// processes and files serve the runtime's logic without needing bubblewrap
// (the isolation itself is proven in sandbox/bwrap).
func newSandbox(t *testing.T) sandbox.Sandbox {
	t.Helper()
	p, err := unsafehost.New(unsafehost.Config{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	sb, err := p.Create(t.Context(), sandbox.CreateParams{ID: "task"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Destroy(context.Background()) })
	return sb
}

func policyRequire(globs ...string) policy.Effective {
	return policy.Merge(policy.Level{Name: "task", Policy: skilld.ToolPolicy{RequireApproval: globs}})
}
