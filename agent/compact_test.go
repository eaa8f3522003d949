package agent_test

import (
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/tool"
)

// compactionTask runs a task that activates a skill early and then calls
// a tool many times with outputs of size chars, in a 4,000-token window,
// answering summary requests with summarize. It checks every request and
// returns the events.
func compactionTask(t *testing.T, placement string, size int, summarize func() (*model.Response, error)) []agent.Event {
	pkgs := &agent.MemoryPackages{}
	guide := bigSkill(t, pkgs, "guide", 200)
	var activation string
	turns := 0
	m := modelFunc(func(req *model.Request) (*model.Response, error) {
		if isSummaryRequest(req) {
			return summarize()
		}
		if n := requestTokens(req); n > 3400 {
			t.Errorf("turn %d: a request of %d tokens, above the effective window of 3400", turns, n)
		}
		if err := checkPairs(req); err != nil {
			t.Errorf("turn %d: %v", turns, err)
		}
		if req.Messages[0].Content != "Start the long job." {
			t.Errorf("turn %d: the first message was lost: %q", turns, req.Messages[0].Content)
		}
		if activation != "" && placement == agent.PlacementTranscript {
			if !withCall(req, activation) {
				t.Errorf("turn %d: the activation is not in the request verbatim with its call", turns)
			}
		}
		turns++
		switch {
		case turns == 1:
			return calls(agent.ActivateSkill, map[string]string{"skill_name": "guide"}), nil
		case turns == 2:
			activation = req.Messages[len(req.Messages)-1].Content
			return calls("emit", map[string]int{"n": size}), nil
		case turns < 30:
			return calls("emit", map[string]int{"n": size}, "emit", map[string]int{"n": 10}), nil
		}
		return &model.Response{Message: model.Message{Content: "finished"}}, nil
	})
	a, err := agent.New(agent.Config{Model: m, Window: 4000, Tokenizer: runeCounter{}, Skills: []agent.Skill{guide}, Packages: pkgs,
		Tools: []*tool.Tool{emitTool(t)}, Placement: placement})
	if err != nil {
		t.Fatal(err)
	}
	return collect(t, a, agent.Task{ID: "t", Input: "Start the long job."})
}

func TestCompaction(t *testing.T) {
	for _, placement := range []string{agent.PlacementTranscript, agent.PlacementContext} {
		t.Run(placement, func(t *testing.T) {
			events := compactionTask(t, placement, 600, func() (*model.Response, error) {
				return &model.Response{Message: model.Message{Content: "Goal: the long job. Done: many emits, all fine."}}, nil
			})
			if last := events[len(events)-1]; last.Type != agent.EventTaskCompleted {
				t.Fatalf("last event %s %v", last.Type, last.Payload)
			}
			comp := payloads[agent.ContextCompacted](events)
			if len(comp) < 2 || !comp[0].Summarized || comp[0].Saved <= 0 || comp[1].Count != 2 {
				t.Errorf("context.compacted: %+v", comp)
			}
			if w := ofType(events, agent.EventContextWarning); len(w) < 1 {
				t.Error("no context.warning before compacting")
			}
		})
	}
}

// When the summary cannot be made, the oldest messages are left out with
// a marker and an event; the task goes on.
func TestCompactionWithoutSummary(t *testing.T) {
	events := compactionTask(t, agent.PlacementTranscript, 600, func() (*model.Response, error) {
		return nil, skilld.Errorf(skilld.EUNAVAILABLE, "the model is overloaded")
	})
	if last := events[len(events)-1]; last.Type != agent.EventTaskCompleted {
		t.Fatalf("last event %s %v", last.Type, last.Payload)
	}
	comp := payloads[agent.ContextCompacted](events)
	if len(comp) == 0 || comp[0].Summarized || !strings.Contains(comp[0].Error, "overloaded") {
		t.Errorf("context.compacted: %+v", comp)
	}
}

// A request is never sent above the effective window: when what must
// stay does not fit, the task fails before the call, saying what takes
// the room.
func TestProtectedContentTooLarge(t *testing.T) {
	calls := 0
	m := modelFunc(func(req *model.Request) (*model.Response, error) {
		calls++
		return &model.Response{Message: model.Message{Content: "never"}}, nil
	})
	a, _ := agent.New(agent.Config{Model: m, Window: 1000, Tokenizer: runeCounter{}, Instruction: strings.Repeat("Follow the rules. ", 300)})
	events := collect(t, a, agent.Task{ID: "t", Input: "x"})
	last := events[len(events)-1]
	if f, _ := last.Payload.(agent.TaskFailed); calls != 0 || !strings.Contains(f.Error, "more than the effective window of 850") {
		t.Errorf("%d calls, last event %s %v", calls, last.Type, last.Payload)
	}
}

// Windowing in context placement: a request carries at most max_messages
// messages, starting at a user message, nothing summarized.
func TestWindowing(t *testing.T) {
	turns := 0
	history := []model.Message{{Role: model.RoleUser, Content: "earlier question"}, {Role: model.RoleAssistant, Content: "earlier answer"}}
	m := modelFunc(func(req *model.Request) (*model.Response, error) {
		turns++
		if err := checkPairs(req); err != nil {
			t.Errorf("turn %d: %v", turns, err)
		}
		if len(req.Messages) > 8 {
			t.Errorf("turn %d: %d messages, above the cap of 8", turns, len(req.Messages))
		}
		if turns > 6 && req.Messages[0].Content != "now this" {
			t.Errorf("turn %d: the window does not start at the turn's user message: %q", turns, req.Messages[0].Content)
		}
		if turns < 12 {
			return calls("emit", map[string]int{"n": 10 * turns}), nil
		}
		return &model.Response{Message: model.Message{Content: "done"}}, nil
	})
	a, _ := agent.New(agent.Config{Model: m, Window: 100000, Tokenizer: runeCounter{}, Tools: []*tool.Tool{emitTool(t)},
		Placement: agent.PlacementContext, MaxMessages: 8})
	events := collect(t, a, agent.Task{ID: "t", Input: "now this", History: history})
	if last := events[len(events)-1]; last.Type != agent.EventTaskCompleted {
		t.Fatalf("last event %s %v", last.Type, last.Payload)
	}
	if n := len(ofType(events, agent.EventContextCompacted)); n != 0 {
		t.Errorf("windowing summarized: %d compactions", n)
	}
}
