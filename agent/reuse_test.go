package agent_test

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"sync"
	"testing"

	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/tool"
)

// answerModel answers each request by looking at it alone, so any number
// of runs may share it.
type answerModel func(*model.Request) *model.Response

func (f answerModel) Generate(_ context.Context, req *model.Request) iter.Seq2[*model.Chunk, error] {
	return func(yield func(*model.Chunk, error) bool) { yield(&model.Chunk{Response: f(req)}, nil) }
}

// TestAgentRunsTasksAtOnce: one agent runs several tasks at the same time,
// each with its own log and its own agent store, as its documentation
// allows.
func TestAgentRunsTasksAtOnce(t *testing.T) {
	add, err := tool.New("tally_add", "Add one to the tally.", func(ctx context.Context, _ struct{}) (string, error) {
		c := agent.SkillContextOf(ctx)
		n, _, err := agent.StoreGet[int](c.Store, "n")
		if err == nil {
			err = agent.StoreSet(ctx, c.Store, "n", n+1)
		}
		return fmt.Sprintf("tally is %d", n+1), err
	})
	if err != nil {
		t.Fatal(err)
	}
	tally := &agent.GoSkill{Name: "tally", Description: "Keeps a tally.", Tools: []*tool.Tool{add},
		Render: func(*agent.SkillContext) []string { return []string{"Tally skill."} }}
	var mu sync.Mutex
	answers := map[string]string{}
	m := answerModel(func(req *model.Request) *model.Response {
		var results []string
		for _, msg := range req.Messages {
			if msg.Role == model.RoleTool {
				results = append(results, msg.Content)
			}
		}
		switch len(results) {
		case 0:
			return activateCall("tally")
		case 1:
			return calls("tally_add", struct{}{})
		}
		mu.Lock()
		answers[req.Messages[0].Content] = results[1]
		mu.Unlock()
		return &model.Response{Message: model.Message{Content: "done"}}
	})
	a, err := agent.New(agent.Config{Model: m, Window: 100000, Tokenizer: runeCounter{}, GoSkills: []*agent.GoSkill{tally}})
	if err != nil {
		t.Fatal(err)
	}
	const tasks = 4
	seqs := make([][]int64, tasks)
	var wg sync.WaitGroup
	for i := range tasks {
		wg.Go(func() {
			for ev, err := range a.Run(t.Context(), agent.Task{ID: fmt.Sprint("t", i), Input: fmt.Sprint("task ", i)}) {
				if err != nil {
					t.Errorf("task %d: %v", i, err)
					return
				}
				seqs[i] = append(seqs[i], ev.Seq)
			}
		})
	}
	wg.Wait()
	// The tasks did the same, so their own logs number their events alike
	// (the store's write takes a number, but no event).
	for i, s := range seqs {
		if !slices.Equal(s, seqs[0]) || len(s) == 0 || s[0] != 1 {
			t.Errorf("task %d's events have seqs %v, task 0's %v: not each task's own log", i, s, seqs[0])
		}
		if got := answers[fmt.Sprint("task ", i)]; got != "tally is 1" {
			t.Errorf("task %d saw %q: another task's store writes reached it", i, got)
		}
	}
}
