package temporal_test

import (
	"strings"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/executor/executortest"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store/storetest"
)

// TestStoppingWorkerHandsOver stops a worker, as skilld worker does on
// SIGTERM, while its model call is in flight: the call finishes there,
// and the command the model asked for runs there; the worker begins no
// further model call (the local steps would otherwise go on in the
// workflow task it holds, to be cut off), and the next worker takes the
// task from its log. Nothing is done twice or reported interrupted: each
// model call is asked once, the command runs once.
func TestStoppingWorkerHandsOver(t *testing.T) {
	c := server.Client(t)
	m := executortest.NewModel()
	e := temporalEnv(t, c, storetest.OpenSQLite(t), m, executortest.Options{})
	ctx := t.Context()
	ag, err := e.svc.CreateAgent(ctx, e.Actor, service.AgentParams{Name: "handed-over",
		Config: skilld.AgentConfig{Model: "test:m", Context: skilld.ContextSettings{Window: 32000}}})
	if err != nil {
		t.Fatal(err)
	}
	const input = "hand over"
	entered, release := make(chan struct{}), make(chan struct{})
	m.Script(input,
		executortest.Block(entered, release, executortest.Call(agent.ToolShell, map[string]string{"command": "echo ran >> runs.txt"})),
		executortest.Call(agent.ToolReadFile, map[string]string{"path": "runs.txt"}),
		executortest.Answer("done"))
	task, err := e.svc.RunTask(ctx, e.Actor, service.StartTaskParams{AgentRef: service.AgentRef{ID: ag.ID}, Input: input})
	if err != nil {
		t.Fatal(err)
	}
	<-entered
	e.handover(func() {
		close(release)
		// The old worker finishes the call it has begun, and runs the
		// command the model asked for.
		for deadline := time.Now().Add(60 * time.Second); len(ofKind(t, e, task.ID, agent.EventToolResult)) == 0; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the stopping worker never finished the step in flight and its command")
			}
		}
	})
	waitStatus(t, e.svc, e.Actor, task.ID, skilld.TaskCompleted)
	if calls := m.Calls(input); len(calls) != 3 || calls[0] != 1 || calls[1] != 1 || calls[2] != 1 {
		t.Errorf("model calls per turn %v, want [1 1 1]", calls)
	}
	var runs string
	for _, ev := range ofKind(t, e, task.ID, agent.EventMessage) {
		if msg := ev.Payload.(agent.Message); msg.ToolName == agent.ToolReadFile {
			runs = msg.Content
		}
	}
	if strings.Count(runs, "ran") != 1 {
		t.Errorf("runs.txt: %q; the command must have run once", runs)
	}
	if n := len(ofKind(t, e, task.ID, agent.EventTaskResumed)); n != 1 {
		t.Errorf("%d task.resumed events, want 1 (the new worker's)", n)
	}
}

// ofKind returns a task's events of one type.
func ofKind(t *testing.T, e *tenv, taskID, typ string) []agent.Event {
	t.Helper()
	entries, err := e.svc.TaskEvents(t.Context(), e.Actor, service.TaskEventsParams{TaskRef: service.TaskRef{ID: taskID}})
	if err != nil {
		t.Fatal(err)
	}
	var evs []agent.Event
	for _, le := range entries {
		if ev, err := agent.EventOf(taskID, le.Seq, le.CreatedAt, le.Kind, le.Payload); err == nil && ev.Type == typ {
			evs = append(evs, ev)
		}
	}
	return evs
}
