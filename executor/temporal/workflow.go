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

// DefaultHeartbeat is the time to notice a dead worker: how long a
// workflow task (and the local step activities it runs) may go without the
// worker's heartbeat before Temporal gives the task to another worker. A
// step in progress sees a cancellation within 0.8 of it, when the worker
// heartbeats the workflow task (Temporal's own default is 10s too).
const DefaultHeartbeat = 10 * time.Second

// heartbeatEvery is how often step activities heartbeat.
const heartbeatEvery = 2 * time.Second

// Workflow versions (workflow.GetVersion) of TaskWorkflow.
const (
	// versionLocalSteps is the version from which Begin and the steps are
	// local activities; before it (histories of workflows started by an
	// older skilld, still in flight) they are activities.
	versionLocalSteps = 1

	changeLocalSteps = "local-steps"
)

// TaskWorkflow drives one task: Begin, then Prepare, then one activity per
// step the run reaches, waiting for a signal where the run waits for an
// approval, until the run ends. Cancelling the workflow cancels the task.
//
// Begin and the steps are local activities: the worker that runs the
// workflow task runs them in the same process, one after the other, and
// records their results (a StepResult, a few bytes) when the workflow
// task completes — when the workflow waits for an approval or ends, or
// at its heartbeat. That saves the server's dispatch of an activity task,
// most of a step's latency. What it costs is what a local activity may
// do: run again. A workflow task that fails or times out (its worker
// died) is replayed, and the local activities whose results were not
// recorded yet run again, possibly on another worker. That repeats no
// side effect: a step activity performs only the step the task log says
// comes next (Activities.Step), so a step whose result is in the log is
// not performed again — the activity reports where the run is instead,
// and the workflow follows. A step cut off in flight is performed again,
// as it was with activities: the run's resume decides what that means
// (a model call asked again, a tool call reported interrupted). Begin
// leaves a begun task as it is. Finish stays an activity: it runs once
// per task, and after a cancellation.
func TaskWorkflow(ctx workflow.Context, in Input) error {
	if in.Heartbeat == 0 {
		in.Heartbeat = DefaultHeartbeat
	}
	ctx = workflow.WithValue(ctx, heartbeatKey{}, in.Heartbeat)
	local := workflow.GetVersion(ctx, changeLocalSteps, workflow.DefaultVersion, versionLocalSteps) == versionLocalSteps
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
		if err := execute(ctx, local, ActivityBegin, in.TaskID).Get(ctx, &b); err != nil {
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
		res, err := step(ctx, local, StepInput{TaskID: in.TaskID, Next: next, Approved: approved})
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

// step runs the activity of a step. A local step refused by a stopping
// worker (errTypeMoving) is asked again after a timer, which ends the
// workflow task: the stopping worker polls no more, so the next workflow
// task, and the step, go to another worker.
func step(ctx workflow.Context, local bool, in StepInput) (StepResult, error) {
	for {
		var res StepResult
		err := execute(ctx, local, activityFor(in.Next), in).Get(ctx, &res)
		var app *sdktemporal.ApplicationError
		if !errors.As(err, &app) || app.Type() != errTypeMoving {
			return res, err
		}
		if err := workflow.Sleep(ctx, time.Second); err != nil {
			return res, err
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

// execute runs the activity name: local, or an activity (workflows from
// before versionLocalSteps).
func execute(ctx workflow.Context, local bool, name string, arg any) workflow.Future {
	if local {
		return workflow.ExecuteLocalActivity(localOptions(ctx, name), name, arg)
	}
	return workflow.ExecuteActivity(options(ctx, name), name, arg)
}

// localOptions are a local activity's timeouts and retries: those of the
// activity it replaces. A local activity has no heartbeat of its own: the
// worker heartbeats the workflow task while it runs, and a dead worker
// is noticed when that times out. Its retries happen in the worker, all
// within ScheduleToCloseTimeout (unlike an activity's, whose attempts
// each have their own StartToCloseTimeout): that bound lets every attempt
// take its full time.
func localOptions(ctx workflow.Context, name string) workflow.Context {
	o := activityOptions(ctx, name)
	return workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout:    o.StartToCloseTimeout,
		ScheduleToCloseTimeout: (o.StartToCloseTimeout + o.RetryPolicy.MaximumInterval) * time.Duration(o.RetryPolicy.MaximumAttempts),
		RetryPolicy:            o.RetryPolicy,
	})
}

// options are each activity's timeouts and retries. Step activities
// heartbeat while the step runs, so a dead worker is noticed within the
// heartbeat timeout and the step goes to another worker, which resumes
// the run from its log. Errors an activity returns are storage or worker
// trouble, retried with backoff; a step's own failure (a model error, a
// tool error) is part of the run, recorded in the log, not an activity
// error.
func options(ctx workflow.Context, name string) workflow.Context {
	return workflow.WithActivityOptions(ctx, activityOptions(ctx, name))
}

func activityOptions(ctx workflow.Context, name string) workflow.ActivityOptions {
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
	return o
}

type heartbeatKey struct{}

// errTypePermanent marks activity errors that retrying cannot fix.
const errTypePermanent = "skilld.permanent"

// errTypeMoving marks a step a stopping worker did not start.
const errTypeMoving = "skilld.moving"

func permanent(format string, args ...any) error {
	return sdktemporal.NewNonRetryableApplicationError(fmt.Sprintf(format, args...), errTypePermanent, nil)
}
