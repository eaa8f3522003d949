package executortest

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"sync"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/service"
)

// Turn answers one model call of a task.
type Turn func(ctx context.Context, req *model.Request) (*model.Response, error)

// Model is the model every task of the suite uses. It answers from the
// conversation, not from a counter: a task's script is chosen by its
// input, and the turn by how many answers the request already holds. So
// it answers a resumed task right wherever it resumes, on any worker. It
// counts the calls of each turn, which is how the suite finds a model
// call made twice.
type Model struct {
	mu      sync.Mutex
	scripts map[string][]Turn
	calls   map[string][]int
}

// NewModel returns a model without scripts.
func NewModel() *Model {
	return &Model{scripts: map[string][]Turn{}, calls: map[string][]int{}}
}

// Script sets the turns of the task whose input is input.
func (m *Model) Script(input string, turns ...Turn) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.scripts[input] = turns
	m.calls[input] = make([]int, len(turns))
}

// Calls returns how many times each turn of a script was asked.
func (m *Model) Calls(input string) []int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]int(nil), m.calls[input]...)
}

// Generate answers the request's task at its turn.
func (m *Model) Generate(ctx context.Context, req *model.Request) iter.Seq2[*model.Chunk, error] {
	return func(yield func(*model.Chunk, error) bool) {
		input, turn := "", 0
		for _, msg := range req.Messages {
			switch {
			case msg.Role == model.RoleUser && input == "":
				input = msg.Content
			case msg.Role == model.RoleAssistant:
				turn++
			}
		}
		m.mu.Lock()
		turns, ok := m.scripts[input]
		if ok && turn < len(turns) {
			m.calls[input][turn]++
		}
		m.mu.Unlock()
		if !ok || turn >= len(turns) {
			yield(nil, skilld.Errorf(skilld.EINVALID, "executortest model: no turn %d for the task %q", turn+1, input))
			return
		}
		resp, err := turns[turn](ctx, req)
		if err != nil {
			yield(nil, err)
			return
		}
		resp.Message.Role = model.RoleAssistant
		yield(&model.Chunk{Response: resp}, nil)
	}
}

// Call is a turn calling a tool; ids are unique per task and turn.
func Call(name string, args any) Turn {
	return func(_ context.Context, req *model.Request) (*model.Response, error) {
		b, err := json.Marshal(args)
		if err != nil {
			return nil, err
		}
		id := fmt.Sprintf("call-%d-%s", len(req.Messages), name)
		return &model.Response{Message: model.Message{ToolCalls: []model.ToolCall{{ID: id, Name: name, Arguments: b}}}, StopReason: model.StopToolCalls}, nil
	}
}

// Answer is a final turn.
func Answer(text string) Turn {
	return func(context.Context, *model.Request) (*model.Response, error) {
		return &model.Response{Message: model.Message{Content: text}, StopReason: model.StopEnd}, nil
	}
}

// Costing is a turn whose answer reports usage.
func Costing(then Turn, prompt, completion int) Turn {
	return func(ctx context.Context, req *model.Request) (*model.Response, error) {
		resp, err := then(ctx, req)
		if resp != nil {
			resp.Usage = model.Usage{PromptTokens: prompt, CompletionTokens: completion}
		}
		return resp, err
	}
}

// Block is a turn that waits until release is closed (or the call is
// cancelled), then answers with then; entered is closed when the call
// arrives.
func Block(entered, release chan struct{}, then Turn) Turn {
	var once sync.Once
	return func(ctx context.Context, req *model.Request) (*model.Response, error) {
		once.Do(func() { close(entered) })
		select {
		case <-release:
			return then(ctx, req)
		case <-ctx.Done():
			return nil, skilld.Errorf(skilld.EUNAVAILABLE, "executortest model: %v", context.Cause(ctx))
		}
	}
}

// Admin bootstraps svc's empty database and returns its instance admin, in
// workspace "default": the Env's Actor.
func Admin(t testing.TB, svc *service.Service) service.Actor {
	t.Helper()
	secret, err := svc.Bootstrap(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	actor, err := svc.Authenticate(t.Context(), secret)
	if err != nil {
		t.Fatal(err)
	}
	return actor
}
