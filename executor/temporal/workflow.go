package temporal

import (
	"cmp"
	"errors"
	"fmt"
	"time"

	sdktemporal "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/sandbox"
)

// MaxStepsPerRun is how many steps a workflow run takes before it
// continues as new (sooner if the server suggests it), which keeps each
// history small: a step adds a handful of small events.
const MaxStepsPerRun = 500

// DefaultHeartbeat is how long a step activity may go without a heartbeat
// before Temporal gives it to another worker: the time to notice a dead
// worker.
const DefaultHeartbeat = 30 * time.Second

// heartbeatEvery is how often step activities heartbeat.
const heartbeatEvery = 2 * time.Second

// TaskWorkflow drives one task: Begin, then Prepare, then one activity per
// step the run reaches, waiting for a signal where the run waits for an
// approval, until the run ends. Cancelling the workflow cancels the task.
func TaskWorkflow(ctx workflow.Context, in Input) error {
	if in.Heartbeat == 0 {
		in.Heartbeat = DefaultHeartbeat
	}
	ctx = workflow.WithValue(ctx, heartbeatKey{}, in.Heartbeat)
	decisions := workflow.GetSignalChannel(ctx, SignalDecide)
	pending := map[string]bool{}
	for _, d := range in.Decisions {
		pending[d.CallID] = d.Approved
	}
	next := Next{Kind: stepStart}
	if in.Next != nil {
		next = *in.Next
	} else {
		var b BeginResult
		if err := workflow.ExecuteActivity(options(ctx, ActivityBegin), ActivityBegin, in.TaskID).Get(ctx, &b); err != nil {
			return end(ctx, in.TaskID, err)
		}
		in.Deadline = b.Deadline
	}
	for steps := 0; ; steps++ {
		var approved bool
		if next.Kind == agent.StepApproval {
			var ok bool
			approved, ok = waitDecision(ctx, decisions, pending, next.CallID, in.Deadline)
			if !ok {
				return end(ctx, in.TaskID, ctx.Err())
			}
		}
		name := activityFor(next)
		var res StepResult
		err := workflow.ExecuteActivity(options(ctx, name), name, StepInput{TaskID: in.TaskID, Next: next, Approved: approved}).Get(ctx, &res)
		if err != nil {
			return end(ctx, in.TaskID, err)
		}
		if res.Done {
			return nil
		}
		next = res.Next
		if steps+1 >= MaxStepsPerRun || workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			// Decisions signalled but not used yet go along.
			var d Decision
			for decisions.ReceiveAsync(&d) {
				pending[d.CallID] = d.Approved
			}
			cont := Input{TaskID: in.TaskID, Next: &next, Deadline: in.Deadline, Heartbeat: in.Heartbeat}
			for id, ok := range pending {
				cont.Decisions = append(cont.Decisions, Decision{CallID: id, Approved: ok})
			}
			return workflow.NewContinueAsNewError(ctx, TaskWorkflow, cont)
		}
	}
}

// waitDecision waits for the decision on callID (which may have come
// already); ok is false when the workflow was cancelled or the task ran
// out of time first.
func waitDecision(ctx workflow.Context, ch workflow.ReceiveChannel, pending map[string]bool, callID string, deadline time.Time) (approved, ok bool) {
	timerCtx, cancelTimer := workflow.WithCancel(ctx)
	defer cancelTimer()
	timedOut := false
	timer := workflow.NewTimer(timerCtx, max(deadline.Sub(workflow.Now(ctx)), time.Millisecond))
	for {
		if a, found := pending[callID]; found {
			delete(pending, callID)
			return a, true
		}
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(ch, func(c workflow.ReceiveChannel, _ bool) {
			var d Decision
			c.Receive(ctx, &d)
			pending[d.CallID] = d.Approved
		})
		sel.AddFuture(timer, func(workflow.Future) { timedOut = true })
		sel.Select(ctx)
		if ctx.Err() != nil {
			return false, false
		}
		if timedOut {
			return false, false
		}
	}
}

// end finishes a task whose workflow stops without its run ending it:
// cancelled (the workflow's cancellation, or the deadline while waiting)
// or failed for good. The Finish activity runs even after cancellation.
func end(ctx workflow.Context, taskID string, cause error) error {
	status, code, msg := skilld.TaskFailed, skilld.EUNAVAILABLE, "the task's workflow failed: "+errText(cause)
	var canceled *sdktemporal.CanceledError
	switch {
	case errors.As(cause, &canceled) || ctx.Err() != nil:
		status, code, msg = skilld.TaskCancelled, skilld.TaskCancelledCode, "cancelled"
	case cause == nil:
		// A limit of the run, as when a local run runs out of time.
		code, msg = skilld.ETOOLARGE, "the task ran out of time while it waited for an approval"
	}
	dctx, cancel := workflow.NewDisconnectedContext(ctx)
	defer cancel()
	if err := workflow.ExecuteActivity(options(dctx, ActivityFinish), ActivityFinish, FinishInput{TaskID: taskID, Status: string(status), Code: code, Message: msg}).Get(dctx, nil); err != nil {
		return err
	}
	if status == skilld.TaskCancelled {
		return sdktemporal.NewCanceledError()
	}
	return nil
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	var app *sdktemporal.ApplicationError
	if errors.As(err, &app) {
		return app.Message()
	}
	return err.Error()
}

// activityFor names the activity that performs a step.
func activityFor(n Next) string {
	switch n.Kind {
	case stepStart:
		return ActivityPrepare
	case agent.StepModel:
		return ActivityModelCall
	case agent.StepCompaction:
		return ActivityCompaction
	case agent.StepApproval:
		return ActivityApproval
	}
	if n.Tool == agent.ActivateSkill {
		return ActivityActivation
	}
	return ActivityToolCall
}

// options are each activity's timeouts and retries. Step activities
// heartbeat while the step runs, so a dead worker is noticed within the
// heartbeat timeout and the step goes to another worker, which resumes
// the run from its log. Errors an activity returns are storage or worker
// trouble, retried with backoff; a step's own failure (a model error, a
// tool error) is part of the run, recorded in the log, not an activity
// error.
func options(ctx workflow.Context, name string) workflow.Context {
	hb, _ := ctx.Value(heartbeatKey{}).(time.Duration)
	o := workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Minute,
		HeartbeatTimeout:    cmp.Or(hb, DefaultHeartbeat),
		RetryPolicy: &sdktemporal.RetryPolicy{
			InitialInterval:        time.Second,
			BackoffCoefficient:     2,
			MaximumInterval:        time.Minute,
			MaximumAttempts:        20,
			NonRetryableErrorTypes: []string{errTypePermanent},
		},
	}
	switch name {
	case ActivityBegin, ActivityFinish:
		o.StartToCloseTimeout, o.HeartbeatTimeout = time.Minute, 0
	case ActivityModelCall, ActivityCompaction:
		o.StartToCloseTimeout = 15 * time.Minute
	case ActivityToolCall:
		o.StartToCloseTimeout = sandbox.MaxTimeout + 5*time.Minute
	}
	return workflow.WithActivityOptions(ctx, o)
}

type heartbeatKey struct{}

// errTypePermanent marks activity errors that retrying cannot fix.
const errTypePermanent = "skilld.permanent"

func permanent(format string, args ...any) error {
	return sdktemporal.NewNonRetryableApplicationError(fmt.Sprintf(format, args...), errTypePermanent, nil)
}
