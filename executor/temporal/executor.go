package temporal

import (
	"cmp"
	"context"
	"errors"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store"
)

// Executor is the server's side: it starts each task as a workflow,
// cancels it by cancelling the workflow, and hands approvals to it as
// signals (service.Executor). The workers run the tasks; the server
// streams their events from the task log as it does for local tasks.
type Executor struct {
	Client    client.Client
	TaskQueue string
	DB        service.TaskRecords
	// Heartbeat is the time to notice a dead worker (DefaultHeartbeat):
	// the workflows' workflow task timeout, which bounds the local step
	// activities too, and the steps' heartbeat timeout in workflows from
	// before steps were local.
	Heartbeat time.Duration
}

var _ service.Executor = (*Executor)(nil)

// Start starts the task's workflow. Starting one that exists already does
// nothing (the task is being run).
func (e *Executor) Start(ctx context.Context, t *skilld.Task) error {
	_, err := e.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: WorkflowID(t.ID), TaskQueue: e.queue(),
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowTaskTimeout:      cmp.Or(e.Heartbeat, DefaultHeartbeat),
	}, WorkflowName, Input{TaskID: t.ID, Heartbeat: e.Heartbeat})
	if err != nil {
		return unavailable("starting the task's workflow", err)
	}
	return nil
}

// Cancel cancels the task's workflow; the task ends as cancelled once the
// workflow has stopped its run. false when there is no such workflow.
func (e *Executor) Cancel(ctx context.Context, taskID string) (bool, error) {
	err := e.Client.CancelWorkflow(ctx, WorkflowID(taskID), "")
	var nf *serviceerror.NotFound
	switch {
	case errors.As(err, &nf):
		return false, nil
	case err != nil:
		return false, unavailable("cancelling the task's workflow", err)
	}
	return true, nil
}

// Decide signals a decision to the workflow of a task waiting for an
// approval of callID.
func (e *Executor) Decide(ctx context.Context, taskID, callID string, approved bool) error {
	if ok, err := awaiting(ctx, e.DB, taskID, callID); err != nil || !ok {
		if err == nil {
			err = skilld.Errorf(skilld.ENOTFOUND, "no tool call %q of task %s is waiting for approval", callID, taskID)
		}
		return err
	}
	if err := e.Client.SignalWorkflow(ctx, WorkflowID(taskID), "", SignalDecide, Decision{CallID: callID, Approved: approved}); err != nil {
		return unavailable("signalling the task's workflow", err)
	}
	return nil
}

func (e *Executor) queue() string {
	if e.TaskQueue != "" {
		return e.TaskQueue
	}
	return DefaultTaskQueue
}

// awaiting reports whether the task's log has an approval request for
// callID without a decision.
func awaiting(ctx context.Context, db service.TaskRecords, taskID, callID string) (bool, error) {
	requested := false
	for after := int64(0); ; {
		page, err := db.TaskLogList(ctx, &store.TaskLogListParams{TaskID: taskID, AfterSeq: after, Limit: 1000})
		if err != nil {
			return false, err
		}
		for _, le := range page {
			if le.Kind != agent.KindEvent {
				continue
			}
			ev, err := agent.EventOf(taskID, le.Seq, le.CreatedAt, le.Kind, le.Payload)
			if err != nil {
				continue
			}
			switch p := ev.Payload.(type) {
			case agent.ApprovalRequested:
				if p.CallID == callID {
					requested = true
				}
			case agent.ApprovalDecided:
				if p.CallID == callID {
					requested = false
				}
			}
		}
		if len(page) < 1000 {
			return requested, nil
		}
		after = page[len(page)-1].Seq
	}
}

func unavailable(what string, err error) error {
	return &skilld.Error{Code: skilld.EUNAVAILABLE, Message: what + ": " + err.Error(), Err: err}
}

// NewWorker returns a worker of queue running the task workflow and the
// activities. o.MaxConcurrentActivityExecutionSize bounds the local
// activities too (unless o bounds them itself): the steps are local.
func NewWorker(c client.Client, queue string, a *Activities, o worker.Options) worker.Worker {
	if queue == "" {
		queue = DefaultTaskQueue
	}
	if o.MaxConcurrentLocalActivityExecutionSize == 0 {
		o.MaxConcurrentLocalActivityExecutionSize = o.MaxConcurrentActivityExecutionSize
	}
	w := worker.New(c, queue, o)
	w.RegisterWorkflowWithOptions(TaskWorkflow, workflow.RegisterOptions{Name: WorkflowName})
	for _, name := range []string{ActivityPrepare, ActivityModelCall, ActivityCompaction, ActivityActivation, ActivityToolCall, ActivityApproval} {
		w.RegisterActivityWithOptions(a.Step, activity.RegisterOptions{Name: name})
	}
	w.RegisterActivityWithOptions(a.Begin, activity.RegisterOptions{Name: ActivityBegin})
	w.RegisterActivityWithOptions(a.Finish, activity.RegisterOptions{Name: ActivityFinish})
	return w
}
