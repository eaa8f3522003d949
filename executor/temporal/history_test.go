package temporal_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/proto"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/executor/executortest"
	skdtemporal "github.com/skilld/skilld/executor/temporal"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store/storetest"
)

// Markers that must stay out of workflow histories: a SKILL.md body, a
// tool's output and a model's answer.
const (
	markSkill  = "SKILL-BODY-7f3a9c-the-instructions-themselves"
	markOutput = "TOOL-OUTPUT-2b8e41"
	markAnswer = "MODEL-ANSWER-c05d17"
)

// TestHistoryHoldsNoContent runs tasks (one with an approval) on the dev
// server and reads their workflow histories back: they hold task IDs,
// step kinds and call IDs, never a SKILL.md body, a tool output or a
// model answer — those stay in the task log. With SKILLD_RECORD_HISTORY=1
// the histories are written to testdata/histories for the replay test.
func TestHistoryHoldsNoContent(t *testing.T) {
	c := server.Client(t)
	m := executortest.NewModel()
	e := temporalEnv(t, c, storetest.OpenSQLite(t), m, executortest.Options{})
	_ = e.queue
	ctx := t.Context()
	if _, err := e.svc.CreateSkill(ctx, e.Actor, service.CreateSkillParams{Files: map[string]string{
		"SKILL.md": "---\nname: marked\ndescription: A skill whose body must not leak.\n---\n" + markSkill + "\n"}}); err != nil {
		t.Fatal(err)
	}
	ag, err := e.svc.CreateAgent(ctx, e.Actor, service.AgentParams{Name: "leaky", Config: skilld.AgentConfig{Model: "test:m",
		Context: skilld.ContextSettings{Window: 32000}, Tools: skilld.ToolPolicy{RequireApproval: []string{agent.ToolWriteFile}}},
		Skills: []service.AgentSkillRef{{Skill: "marked"}}})
	if err != nil {
		t.Fatal(err)
	}
	m.Script("plain",
		executortest.Call(agent.ActivateSkill, map[string]string{"skill_name": "marked"}),
		executortest.Call(agent.ToolShell, map[string]string{"command": "echo " + markOutput}),
		executortest.Answer(markAnswer))
	m.Script("approved",
		executortest.Call(agent.ToolWriteFile, map[string]string{"path": "x.txt", "content": markOutput}),
		executortest.Answer(markAnswer))
	for _, input := range []string{"plain", "approved"} {
		task, err := e.svc.RunTask(ctx, e.Actor, service.StartTaskParams{AgentRef: service.AgentRef{ID: ag.ID}, Input: input})
		if err != nil {
			t.Fatal(err)
		}
		if input == "approved" {
			waitStatus(t, e.svc, e.Actor, task.ID, skilld.TaskWaitingForApproval)
			callID := ""
			for deadline := time.Now().Add(30 * time.Second); callID == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				entries, _ := e.svc.TaskEvents(ctx, e.Actor, service.TaskEventsParams{TaskRef: service.TaskRef{ID: task.ID}})
				for _, le := range entries {
					if ev, _ := agent.EventOf(task.ID, le.Seq, le.CreatedAt, le.Kind, le.Payload); ev.Type == agent.EventApprovalRequested {
						callID = ev.Payload.(agent.ApprovalRequested).CallID
					}
				}
			}
			if _, err := e.svc.DecideApproval(ctx, e.Actor, service.DecideApprovalParams{TaskRef: service.TaskRef{ID: task.ID}, CallID: callID, Approved: true}); err != nil {
				t.Fatal(err)
			}
		}
		waitStatus(t, e.svc, e.Actor, task.ID, skilld.TaskCompleted)
		// The last steps' results enter the history when the workflow
		// task that ran them completes, after the task has ended.
		if err := c.GetWorkflow(ctx, skdtemporal.WorkflowID(task.ID), "").Get(ctx, nil); err != nil {
			t.Fatal(err)
		}

		hist := &historypb.History{}
		it := c.GetWorkflowHistory(ctx, skdtemporal.WorkflowID(task.ID), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				t.Fatal(err)
			}
			hist.Events = append(hist.Events, ev)
		}
		raw, err := proto.Marshal(hist)
		if err != nil {
			t.Fatal(err)
		}
		for _, mark := range []string{markSkill, markOutput, markAnswer} {
			if bytes.Contains(raw, []byte(mark)) {
				t.Errorf("the history of task %q holds %q", input, mark)
			}
		}
		t.Logf("task %q: %d history events, %d bytes", input, len(hist.Events), len(raw))
		if os.Getenv("SKILLD_RECORD_HISTORY") == "1" {
			js, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(hist)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join("testdata", "histories", input+".json"), js, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestReplayRecordedHistories replays histories recorded from real runs
// (testdata/histories) against today's workflow code: a change that makes
// the workflow decide differently on the same events — which would break
// every task in flight during an upgrade — fails here. The *-activities
// histories were recorded before the steps became local activities.
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "histories", "*.json"))
	if err != nil || len(files) < 2 {
		t.Fatalf("recorded histories: %v %v (record them with SKILLD_RECORD_HISTORY=1 go test -run TestHistoryHoldsNoContent)", files, err)
	}
	for _, f := range files {
		r := worker.NewWorkflowReplayer()
		r.RegisterWorkflowWithOptions(skdtemporal.TaskWorkflow, workflow.RegisterOptions{Name: skdtemporal.WorkflowName})
		if err := r.ReplayWorkflowHistoryFromJSONFile(nil, f); err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
		}
	}
}

func waitStatus(t *testing.T, svc *service.Service, a service.Actor, id string, st skilld.TaskStatus) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		task, err := svc.GetTask(t.Context(), a, service.GetTaskParams{TaskRef: service.TaskRef{ID: id}})
		if err == nil && task.Status == st {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s never got %s: %+v %v", id, st, task, err)
		}
	}
}
