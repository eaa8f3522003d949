package analytics_test

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/tool"
	"github.com/skilld/skilld/analytics"
	"github.com/skilld/skilld/pack"
)

// quarters counts a token per four characters: deterministic budgets.
type quarters struct{}

func (quarters) Count(s string) int { return (len([]rune(s)) + 3) / 4 }

// turns is a model answering each request with answer(n, req), n
// counting the task's turns from 1; summary requests (compaction) get a
// fixed summary and do not count.
type turns struct {
	answer func(n int, req *model.Request) *model.Response
	n      atomic.Int64
	ids    atomic.Int64
}

// Resume skips the turns a resumed task's log answered (model.Resumable);
// the tasks resumed here make no summary requests.
func (m *turns) Resume(answered int) { m.n.Add(int64(answered)) }

func (m *turns) Generate(_ context.Context, req *model.Request) iter.Seq2[*model.Chunk, error] {
	return func(yield func(*model.Chunk, error) bool) {
		var resp *model.Response
		if strings.HasPrefix(req.System, "You summarize the earlier part") && len(req.Tools) == 0 {
			resp = &model.Response{Message: model.Message{Content: "Goal: the job. Done: some of it."}}
		} else {
			resp = m.answer(int(m.n.Add(1)), req)
		}
		resp.Message.Role = model.RoleAssistant
		for i := range resp.Message.ToolCalls {
			resp.Message.ToolCalls[i].ID = fmt.Sprint("call_", m.ids.Add(1))
		}
		yield(&model.Chunk{Response: resp}, nil)
	}
}

// activate is an answer activating the named skills.
func activate(names ...string) *model.Response {
	var calls []model.ToolCall
	for _, n := range names {
		calls = append(calls, model.Call(agent.ActivateSkill, map[string]string{"skill_name": n}))
	}
	return &model.Response{Message: model.Message{ToolCalls: calls}}
}

func answer(text string) *model.Response {
	return &model.Response{Message: model.Message{Content: text}}
}

// skills builds packages for a run's skills.
type skills struct {
	pkgs *agent.MemoryPackages
	list []analytics.Skill
}

func newSkills() *skills { return &skills{pkgs: &agent.MemoryPackages{}} }

// add stores a skill whose SKILL.md body is about words words long, with
// the extra files named.
func (s *skills) add(t testing.TB, name, desc string, words int, extra ...string) *analytics.Skill {
	t.Helper()
	md := fmt.Sprintf("---\nname: %s\ndescription: %s\n---\n# %s\n\n%s", name, desc, name, strings.Repeat("word ", words))
	files := []pack.File{{Path: "SKILL.md", Data: []byte(md)}}
	for _, e := range extra {
		files = append(files, pack.File{Path: e, Data: []byte("x")})
	}
	p, err := pack.New(files, pack.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range p.Entries() {
		paths = append(paths, e.Path)
	}
	s.list = append(s.list, analytics.Skill{Version: len(s.list) + 1,
		Skill: agent.Skill{ID: "id-" + name, Name: name, Description: desc, Digest: s.pkgs.Add(p), Files: paths}})
	return &s.list[len(s.list)-1]
}

func (s *skills) agentSkills() []agent.Skill {
	out := make([]agent.Skill, len(s.list))
	for i, sk := range s.list {
		out[i] = sk.Skill
	}
	return out
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

// run runs task with cfg (its skills, packages and a memory log set) to
// its end and returns its log.
func run(t testing.TB, cfg agent.Config, s *skills, task agent.Task) []agent.LogEntry {
	t.Helper()
	log := agent.NewMemoryLog(task.Resume)
	cfg.Skills, cfg.Packages, cfg.Log = s.agentSkills(), s.pkgs, log
	if cfg.Tokenizer == nil {
		cfg.Tokenizer = quarters{}
	}
	a, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range a.Run(t.Context(), task) {
		if err != nil {
			t.Fatal(err)
		}
	}
	return log.Entries()
}

// entries are a log as the store returns it.
func entries(log []agent.LogEntry) []*skilld.TaskLogEntry {
	out := make([]*skilld.TaskLogEntry, len(log))
	for i, e := range log {
		out[i] = &skilld.TaskLogEntry{TaskID: "t", Seq: e.Seq, Kind: e.Kind, Payload: e.Payload, CreatedAt: e.Time}
	}
	return out
}

// events decodes a log's events.
func events(t testing.TB, log []agent.LogEntry) []agent.Event {
	t.Helper()
	var out []agent.Event
	for _, e := range log {
		if e.Kind != agent.KindEvent {
			continue
		}
		ev, err := agent.EventOf("t", e.Seq, e.Time, e.Kind, e.Payload)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
	return out
}

// byName indexes extracted rows.
func byName(rows []analytics.TaskSkill) map[string]analytics.TaskSkill {
	m := map[string]analytics.TaskSkill{}
	for _, r := range rows {
		m[r.Name] = r
	}
	return m
}
