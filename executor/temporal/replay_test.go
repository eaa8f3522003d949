package temporal_test

import (
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/executor/executortest"
	skdtemporal "github.com/skilld/skilld/executor/temporal"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store/storetest"
)

// TestLocalStepsRunAgain crashes a worker whose workflow task has run
// steps Temporal has not recorded: after an approval (whose wait recorded
// the steps before it), the approved write_file, a model call, a shell
// command, and a model call still in flight. The next worker replays the
// workflow and runs the first unrecorded local activity — the approval —
// again, on a task log that has moved three steps past it. Nothing is done
// twice: the file is written once, the command runs once, each answered
// model call is asked once; only the call cut off is asked again.
func TestLocalStepsRunAgain(t *testing.T) {
	c := server.Client(t)
	m := executortest.NewModel()
	// A heartbeat long enough that the workflow task does not record its
	// steps (it would at 0.8 of it) before the crash.
	e := temporalEnvWith(t, c, storetest.OpenSQLite(t), m, executortest.Options{}, 10*time.Second)
	ctx := t.Context()
	ag, err := e.svc.CreateAgent(ctx, e.Actor, service.AgentParams{Name: "replayed", Config: skilld.AgentConfig{Model: "test:m",
		Context: skilld.ContextSettings{Window: 32000}, Tools: skilld.ToolPolicy{RequireApproval: []string{agent.ToolWriteFile}}}})
	if err != nil {
		t.Fatal(err)
	}
	const input = "run again"
	entered, release := make(chan struct{}), make(chan struct{})
	m.Script(input,
		executortest.Call(agent.ToolWriteFile, map[string]string{"path": "x.txt", "content": "x"}),
		executortest.Call(agent.ToolShell, map[string]string{"command": "echo ran >> runs.txt"}),
		executortest.Block(entered, release, executortest.Call(agent.ToolReadFile, map[string]string{"path": "runs.txt"})),
		executortest.Answer("done"))
	task, err := e.svc.RunTask(ctx, e.Actor, service.StartTaskParams{AgentRef: service.AgentRef{ID: ag.ID}, Input: input})
	if err != nil {
		t.Fatal(err)
	}
	waitStatus(t, e.svc, e.Actor, task.ID, skilld.TaskWaitingForApproval)
	var callID string
	for deadline := time.Now().Add(30 * time.Second); callID == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, ev := range ofKind(t, e, task.ID, agent.EventApprovalRequested) {
			callID = ev.Payload.(agent.ApprovalRequested).CallID
		}
	}
	if _, err := e.svc.DecideApproval(ctx, e.Actor, service.DecideApprovalParams{TaskRef: service.TaskRef{ID: task.ID}, CallID: callID, Approved: true}); err != nil {
		t.Fatal(err)
	}
	<-entered
	// Recorded: the version, Begin, Prepare and the first model call.
	if n := markers(t, e, task.ID); n > 4 {
		t.Fatalf("%d markers before the crash: the workflow task recorded the steps after the approval (a machine too slow for this test)", n)
	} else {
		t.Logf("%d markers before the crash", n)
	}
	e.Restart(t)
	close(release)
	waitStatus(t, e.svc, e.Actor, task.ID, skilld.TaskCompleted)
	if calls := m.Calls(input); len(calls) != 4 || calls[0] != 1 || calls[1] != 1 || calls[2] != 2 || calls[3] != 1 {
		t.Errorf("model calls per turn %v, want [1 1 2 1]", calls)
	}
	var runs string
	written := 0
	for _, ev := range ofKind(t, e, task.ID, agent.EventMessage) {
		switch msg := ev.Payload.(agent.Message); msg.ToolName {
		case agent.ToolReadFile:
			runs = msg.Content
		case agent.ToolWriteFile:
			written++
		}
	}
	if strings.Count(runs, "ran") != 1 || written != 1 {
		t.Errorf("runs.txt %q, write_file results %d: each must have run once", runs, written)
	}
	if n := len(ofKind(t, e, task.ID, agent.EventApprovalRequested)); n != 1 {
		t.Errorf("approval requested %d times", n)
	}
}

// markers counts the marker events (local activities' results, versions)
// in a task's workflow history.
func markers(t *testing.T, e *tenv, taskID string) int {
	t.Helper()
	n := 0
	it := e.client.GetWorkflowHistory(t.Context(), skdtemporal.WorkflowID(taskID), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if ev.GetEventType() == enumspb.EVENT_TYPE_MARKER_RECORDED {
			n++
		}
	}
	return n
}
