package agent_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/tool"
)

// counted is a tool that counts its calls: a side effect a resume must not
// repeat.
func counted(t *testing.T, name string, idempotent bool, n *atomic.Int64, during func(ctx context.Context)) *tool.Tool {
	tl, err := tool.New(name, "Counts its calls.", func(ctx context.Context, _ struct{}) (string, error) {
		n.Add(1)
		if during != nil {
			during(ctx)
		}
		return "counted", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	tl.Idempotent = idempotent
	return tl
}

// runUntil runs a task and cancels it with ErrSuspended from inside the
// named tool's first call, as a shutdown or a crash mid-call would leave
// it; it returns the log so far.
func suspendedIn(t *testing.T, toolName string, idempotent bool, calls *atomic.Int64) *agent.MemoryLog {
	t.Helper()
	ctx, cancel := context.WithCancelCause(t.Context())
	defer cancel(nil)
	log := &agent.MemoryLog{}
	tl := counted(t, toolName, idempotent, calls, func(context.Context) { cancel(agent.ErrSuspended) })
	a, err := agent.New(agent.Config{Model: script(t, do(toolName, map[string]any{}), do(toolName, map[string]any{})), Window: 10000,
		Tokenizer: runeCounter{}, Tools: []*tool.Tool{tl}, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range a.Run(ctx, agent.Task{ID: "t", Input: "go"}) {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range log.Entries() {
		if strings.Contains(string(e.Payload), agent.EventTaskFailed) || strings.Contains(string(e.Payload), `"tool.result"`) {
			t.Fatalf("a suspended run wrote %s", e.Payload)
		}
	}
	return log
}

func resume(t *testing.T, log *agent.MemoryLog, tl *tool.Tool, steps ...step) []agent.Event {
	t.Helper()
	m := script(t, steps...)
	a, err := agent.New(agent.Config{Model: m, Window: 10000, Tokenizer: runeCounter{}, Tools: []*tool.Tool{tl}, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	return collect(t, a, agent.Task{ID: "t", Input: "go", Resume: log.Entries()})
}

// A non-idempotent call in flight when the task stopped is not run again:
// the model reads that it was interrupted.
func TestResumeInterruptedCall(t *testing.T) {
	var calls atomic.Int64
	log := suspendedIn(t, "send_mail", false, &calls)
	before := time.Now()
	ev := resume(t, log, counted(t, "send_mail", false, &calls, nil), do("send_mail", map[string]any{}),
		func(t *testing.T, req *model.Request) *model.Response {
			last := req.Messages[len(req.Messages)-1]
			if last.Role != model.RoleTool || !last.IsError || !strings.Contains(last.Content, "interrupted") {
				t.Errorf("the model should read that the call was interrupted, got %+v", last)
			}
			return &model.Response{Message: model.Message{Content: "ok"}}
		})
	if calls.Load() != 1 {
		t.Errorf("send_mail ran %d times; a resume must not repeat it", calls.Load())
	}
	after := time.Now()
	if len(ofType(ev, agent.EventTaskResumed)) != 1 || len(ofType(ev, agent.EventTaskCompleted)) != 1 {
		t.Errorf("events of the resumed run: %v", types(ev))
	} else if at := ofType(ev, agent.EventTaskResumed)[0].Time; at.Before(before) || at.After(after) {
		t.Errorf("task.resumed delivered at %v, not between %v and %v", at, before, after)
	}
	if ofType(ev, agent.EventTaskStarted) != nil {
		t.Error("a resumed run delivered task.started again")
	}
}

// An idempotent call in flight is simply run again.
func TestResumeIdempotentCall(t *testing.T) {
	var calls atomic.Int64
	log := suspendedIn(t, "read_it", true, &calls)
	resume(t, log, counted(t, "read_it", true, &calls, nil), do("read_it", map[string]any{}), func(t *testing.T, req *model.Request) *model.Response {
		if last := req.Messages[len(req.Messages)-1]; last.IsError || last.Content != "counted" {
			t.Errorf("the re-run call's result: %+v", last)
		}
		return &model.Response{Message: model.Message{Content: "ok"}}
	})
	if calls.Load() != 2 {
		t.Errorf("read_it ran %d times, want 2 (once before the stop, once after)", calls.Load())
	}
}

// A completed call is never repeated, and neither is a model call.
func TestResumeRepeatsNothing(t *testing.T) {
	var calls atomic.Int64
	log := &agent.MemoryLog{}
	m := script(t, do("act", map[string]any{}), do("act", map[string]any{}), func(*testing.T, *model.Request) *model.Response {
		return &model.Response{Message: model.Message{Content: "done"}}
	})
	a, _ := agent.New(agent.Config{Model: m, Window: 10000, Tokenizer: runeCounter{}, Tools: []*tool.Tool{counted(t, "act", false, &calls, nil)}, Log: log})
	collect(t, a, agent.Task{ID: "t", Input: "go"})
	all := log.Entries()
	// Stop after the second call's result: resume with a model that has
	// only the last answer.
	cut := 0
	for i, e := range all {
		if e.Kind == agent.KindMessage && strings.Contains(string(e.Payload), `"role":"tool"`) {
			cut = i + 1
		}
	}
	short := agent.NewMemoryLog(all[:cut])
	final := model.NewScripted(model.Reply("not sent: answered by the log"), model.Reply("nor this"), model.Reply("done"))
	b, _ := agent.New(agent.Config{Model: final, Window: 10000, Tokenizer: runeCounter{}, Tools: []*tool.Tool{counted(t, "act", false, &calls, nil)}, Log: short})
	ev := collect(t, b, agent.Task{ID: "t", Input: "go", Resume: all[:cut]})
	if calls.Load() != 2 || len(final.Requests()) != 1 || len(ofType(ev, agent.EventTaskCompleted)) != 1 {
		t.Errorf("tool calls %d (want 2), model calls after the resume %d (want 1), events %v", calls.Load(), len(final.Requests()), types(ev))
	}
}

// A log that does not match the run (here: the policy now denies the tool
// the log shows running) fails the task instead of going on from a state it
// never had.
func TestResumeDiverged(t *testing.T) {
	var calls atomic.Int64
	log := &agent.MemoryLog{}
	steps := []step{do("act", map[string]any{}), do("act", map[string]any{})}
	a, _ := agent.New(agent.Config{Model: script(t, steps...), Window: 10000, Tokenizer: runeCounter{}, Tools: []*tool.Tool{counted(t, "act", false, &calls, nil)}, Log: log})
	collect(t, a, agent.Task{ID: "t", Input: "go"})
	all := log.Entries()
	b, _ := agent.New(agent.Config{Model: script(t, steps...), Window: 10000, Tokenizer: runeCounter{}, Tools: []*tool.Tool{counted(t, "act", false, &calls, nil)},
		Policy: policyDeny("act"), Log: agent.NewMemoryLog(all[:8])})
	ev := collect(t, b, agent.Task{ID: "t", Input: "go", Resume: all[:8]})
	failed := payloads[agent.TaskFailed](ev)
	if len(failed) != 1 || !strings.Contains(failed[0].Error, "cannot be resumed") {
		t.Fatalf("events %v", types(ev))
	}
}

// A gate that refuses suspends the run before the step: nothing of the
// step is written.
func TestGateSuspends(t *testing.T) {
	log := &agent.MemoryLog{}
	var steps []agent.Step
	a, _ := agent.New(agent.Config{Model: script(t, do("act", map[string]any{})), Window: 10000, Tokenizer: runeCounter{},
		Tools: []*tool.Tool{counted(t, "act", false, new(atomic.Int64), nil)}, Log: log,
		Gate: func(_ context.Context, s agent.Step) error {
			steps = append(steps, s)
			if s.Kind == agent.StepTool {
				return errors.New("not now")
			}
			return nil
		}})
	collect(t, a, agent.Task{ID: "t", Input: "go"})
	if len(steps) != 2 || steps[0].Kind != agent.StepModel || steps[1].Tool != "act" {
		t.Errorf("steps %+v", steps)
	}
	last := log.Entries()[len(log.Entries())-1]
	if !strings.Contains(string(last.Payload), `"tool.call"`) {
		t.Errorf("the log should end at the call the gate held: %s", last.Payload)
	}
}

func types(ev []agent.Event) []string {
	out := make([]string, len(ev))
	for i, e := range ev {
		out[i] = e.Type
	}
	return out
}

type approveFunc func(ctx context.Context, req agent.ApprovalRequest) (bool, error)

func (f approveFunc) Approve(ctx context.Context, req agent.ApprovalRequest) (bool, error) {
	return f(ctx, req)
}

// A task stopped while it waited for approval asks again on resume, once;
// a recorded decision is not asked again.
func TestResumeWaitingForApproval(t *testing.T) {
	var calls atomic.Int64
	steps := []step{do("deploy", map[string]any{}), do("deploy", map[string]any{}), func(*testing.T, *model.Request) *model.Response {
		return &model.Response{Message: model.Message{Content: "deployed twice"}}
	}}
	ctx, cancel := context.WithCancelCause(t.Context())
	log := &agent.MemoryLog{}
	asked := 0
	first := approveFunc(func(ctx context.Context, _ agent.ApprovalRequest) (bool, error) {
		if asked++; asked == 2 {
			cancel(agent.ErrSuspended) // the server stops during the second wait
			<-ctx.Done()
			return false, ctx.Err()
		}
		return true, nil
	})
	cfg := agent.Config{Model: script(t, steps...), Window: 10000, Tokenizer: runeCounter{}, Tools: []*tool.Tool{counted(t, "deploy", false, &calls, nil)},
		Policy: policyRequire("deploy"), Approver: first, Log: log}
	a, _ := agent.New(cfg)
	for range a.Run(ctx, agent.Task{ID: "t", Input: "go"}) {
	}
	asked = 0
	cfg.Model, cfg.Log = script(t, steps...), agent.NewMemoryLog(log.Entries())
	cfg.Approver = approveFunc(func(context.Context, agent.ApprovalRequest) (bool, error) { asked++; return true, nil })
	b, _ := agent.New(cfg)
	ev := collect(t, b, agent.Task{ID: "t", Input: "go", Resume: log.Entries()})
	if asked != 1 || calls.Load() != 2 || len(ofType(ev, agent.EventTaskCompleted)) != 1 {
		t.Errorf("asked %d times after the resume (want 1), deploy ran %d times (want 2), events %v", asked, calls.Load(), types(ev))
	}
	if n := len(ofType(ev, agent.EventApprovalRequested)); n != 0 {
		t.Errorf("the resumed run requested approval again in the log (%d), it was already requested", n)
	}
}
