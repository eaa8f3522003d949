package agent_test

import (
	"context"
	"fmt"
	"iter"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/tool"
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

// payloads returns the payloads of type T among events, in order.
func payloads[T agent.Payload](events []agent.Event) []T {
	var out []T
	for _, e := range events {
		if p, ok := e.Payload.(T); ok {
			out = append(out, p)
		}
	}
	return out
}

func exampleDir(name string) string { return filepath.Join("..", "examples", "skills", name) }

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

// modelFunc is a model answering each request with a function of it. It
// gives calls without an ID one, and reports the request's size as
// requestTokens counts it, as a provider reports its prompt tokens.
type modelFunc func(req *model.Request) (*model.Response, error)

var callIDs atomic.Int64

func (f modelFunc) Generate(_ context.Context, req *model.Request) iter.Seq2[*model.Chunk, error] {
	return func(yield func(*model.Chunk, error) bool) {
		resp, err := f(req)
		if err != nil {
			yield(nil, err)
			return
		}
		resp.Message.Role = model.RoleAssistant
		for i := range resp.Message.ToolCalls {
			if resp.Message.ToolCalls[i].ID == "" {
				resp.Message.ToolCalls[i].ID = fmt.Sprint("call_", callIDs.Add(1))
			}
		}
		resp.Usage = model.Usage{PromptTokens: requestTokens(req), CompletionTokens: 10}
		yield(&model.Chunk{Text: resp.Message.Content, Response: resp}, nil)
	}
}

// isSummaryRequest tells a compaction's summarizing call from a turn.
func isSummaryRequest(req *model.Request) bool {
	return strings.HasPrefix(req.System, "You summarize the earlier part") && len(req.Tools) == 0
}

// emitTool returns n characters: a tool output of any size.
func emitTool(t testing.TB) *tool.Tool {
	tl, err := tool.New("emit", "Print n characters.", func(_ context.Context, p struct {
		N int `json:"n"`
	}) (string, error) {
		return strings.Repeat("y", p.N), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// requestTokens counts a request as the runtime does with runeCounter,
// independently of it: system, tool specs, each message with its framing.
func requestTokens(req *model.Request) int {
	c := runeCounter{}
	n := c.Count(req.System)
	for _, s := range req.Tools {
		n += c.Count(s.Name) + c.Count(s.Description) + c.Count(string(s.Schema))
	}
	for _, m := range req.Messages {
		n += agent.MessageOverhead + c.Count(m.Content)
		for _, tc := range m.ToolCalls {
			n += c.Count(tc.Name) + c.Count(string(tc.Arguments))
		}
	}
	return n
}

// checkPairs reports a tool result without its call before it, or a call
// without its result, in a request; and a request not starting with the
// user.
func checkPairs(req *model.Request) error {
	if len(req.Messages) == 0 || req.Messages[0].Role != model.RoleUser {
		return fmt.Errorf("the request does not start with a user message")
	}
	open := map[string]bool{}
	for i, m := range req.Messages {
		if m.Role == model.RoleTool {
			if !open[m.ToolCallID] {
				return fmt.Errorf("message %d: result of call %q without its call", i, m.ToolCallID)
			}
			delete(open, m.ToolCallID)
			continue
		}
		if len(open) > 0 {
			return fmt.Errorf("message %d: calls %v have no results before it", i, open)
		}
		for _, c := range m.ToolCalls {
			open[c.ID] = true
		}
	}
	if len(open) > 0 {
		return fmt.Errorf("calls %v have no results", open)
	}
	return nil
}

// withCall reports whether the request holds a tool result of exactly
// content, after the assistant message that made its call.
func withCall(req *model.Request, content string) bool {
	for i, m := range req.Messages {
		if m.Role != model.RoleTool || m.Content != content {
			continue
		}
		for j := i - 1; j >= 0; j-- {
			if req.Messages[j].Role != model.RoleTool {
				for _, c := range req.Messages[j].ToolCalls {
					if c.ID == m.ToolCallID {
						return true
					}
				}
				break
			}
		}
	}
	return false
}

func policyDeny(globs ...string) policy.Effective {
	return policy.Merge(policy.Level{Name: "task", Policy: skilld.ToolPolicy{Denied: globs}})
}
