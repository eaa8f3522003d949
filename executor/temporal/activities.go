package temporal

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/activity"
	sdktemporal "go.temporal.io/sdk/temporal"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/executor"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store"
)

// Activities are the workflow's activities, on a worker.
type Activities struct {
	// Runner builds and runs tasks (executor.Local's Begin, Resume,
	// Abandon); its own pool is not used.
	Runner *executor.Local
	DB     service.TaskRecords
	Logger *slog.Logger
	// IdleTimeout drops a session parked this long (default 5 minutes).
	IdleTimeout time.Duration

	sessions sessions
	state    atomic.Int32 // running, draining or stopped
	// runs are the runs this worker started that have not returned: a
	// dropped session's run still winds down (its model call or command
	// ending).
	runs runGroup
}

// Activities' states.
const (
	running int32 = iota
	// draining: the worker is stopping; the steps of a model's answer
	// (tool calls, approvals) go on, nothing else begins.
	draining
	// stopped: the runs are suspended; nothing begins.
	stopped
)

// handsOver says whether a draining worker hands a task over rather than
// perform its step n.
func handsOver(n Next) bool {
	return n.Kind == stepStart || n.Kind == agent.StepModel || n.Kind == agent.StepCompaction
}

// Begin moves a queued task to running and returns its deadline. A task
// already begun (a retried Begin) is left as it is; a task already ended
// (cancelled while it waited) is not begun.
func (a *Activities) Begin(ctx context.Context, taskID string) (BeginResult, error) {
	t, err := a.DB.TaskGet(ctx, &store.TaskGetParams{ID: taskID})
	if err != nil {
		return BeginResult{}, activityError(err)
	}
	if t.Status == skilld.TaskQueued {
		if err := a.Runner.Begin(ctx, t); err != nil && skilld.ErrorCode(err) != skilld.ECONFLICT {
			return BeginResult{}, activityError(err)
		}
		if t, err = a.DB.TaskGet(ctx, &store.TaskGetParams{ID: taskID}); err != nil {
			return BeginResult{}, activityError(err)
		}
	}
	return BeginResult{Deadline: a.Runner.Deadline(t)}, nil
}

// Step lets the task's run perform the step in.Next and returns the next
// one. When the run is parked somewhere else (a session rebuilt from the
// log after the step it was asked for had already happened, or had been
// interrupted), Step performs nothing and reports where it is, so that the
// workflow schedules the right activity.
func (a *Activities) Step(ctx context.Context, in StepInput) (StepResult, error) {
	if st := a.state.Load(); st == stopped || st == draining && handsOver(in.Next) {
		// A stopping worker would go on running local steps in the
		// workflow tasks it holds, to be cut off when the stop times
		// out, and could rebuild a run it has just suspended. It hands
		// the task over instead, at the next step the log can say was
		// not begun: a model call (a tool call whose model answer is
		// logged but whose result is not would be resumed elsewhere as
		// interrupted, not run).
		return StepResult{}, sdktemporal.NewNonRetryableApplicationError(
			fmt.Sprintf("this worker is stopping; task %s goes on on another worker", in.TaskID), errTypeMoving, nil)
	}
	s, err := a.session(ctx, in.TaskID)
	if err != nil || s == nil {
		return StepResult{Done: s == nil}, err
	}
	defer s.busy.Store(false)
	s.used = time.Now()
	at := s.at
	if in.Next.Kind == stepStart || at.step.Kind != in.Next.Kind || at.step.CallID != in.Next.CallID {
		return a.report(ctx, in.TaskID, at), nil
	}
	if at.step.Kind == agent.StepApproval {
		s.approved = in.Approved
		a.status(ctx, in.TaskID, skilld.TaskRunning)
	}
	s.proceed <- struct{}{}
	p, err := a.wait(ctx, s)
	if err != nil {
		return StepResult{}, err
	}
	if err := a.parked(ctx, s, p); err != nil {
		return StepResult{}, err
	}
	if p.done {
		// The run ended: the task did, unless the run was fenced out of
		// the log by another (then the next step finds out from the log).
		a.sessions.drop(s)
		t, err := a.DB.TaskGet(ctx, &store.TaskGetParams{ID: in.TaskID})
		if err != nil {
			return StepResult{}, activityError(err)
		}
		if !t.Status.Done() {
			return StepResult{}, sdkError("the run of task %s stopped without ending it; starting over from its log", in.TaskID)
		}
		return StepResult{Done: true}, nil
	}
	return a.report(ctx, in.TaskID, p), nil
}

// session returns this worker's session of a task, fresh, held for the
// caller (busy): one whose run is parked where the task log ends. A stale
// one (another worker took the task further; this is a retry, or the
// replay of a local activity) is dropped and the run rebuilt from the
// log, and so is one another step holds (left over from a workflow task
// Temporal gave up on). nil, nil when the task has ended.
func (a *Activities) session(ctx context.Context, taskID string) (*session, error) {
	t, err := a.DB.TaskGet(ctx, &store.TaskGetParams{ID: taskID})
	if err != nil {
		return nil, activityError(err)
	}
	if t.Status.Done() {
		if s := a.sessions.get(taskID); s != nil {
			a.sessions.drop(s)
		}
		return nil, nil
	}
	if s := a.sessions.get(taskID); s != nil {
		if s.seq == t.LastSeq && !s.at.done && activity.GetInfo(ctx).Attempt == 1 && s.busy.CompareAndSwap(false, true) {
			return s, nil
		}
		a.sessions.drop(s)
	}
	s, done, err := a.open(ctx, t)
	if done {
		if t, err = a.DB.TaskGet(ctx, &store.TaskGetParams{ID: taskID}); err != nil {
			return nil, activityError(err)
		}
		if !t.Status.Done() {
			return nil, sdkError("the run of task %s stopped without ending it; starting over from its log", taskID)
		}
		return nil, nil
	}
	return s, err
}

// parked records where a session's run parked, and the log's end then.
func (a *Activities) parked(ctx context.Context, s *session, p park) error {
	t, err := a.DB.TaskGet(ctx, &store.TaskGetParams{ID: s.taskID})
	if err != nil {
		a.sessions.drop(s)
		return activityError(err)
	}
	s.at, s.seq, s.used = p, t.LastSeq, time.Now()
	return nil
}

// open starts the task's run on this worker: replaying its log, it goes on
// to the first step that is not in the log, where it parks. done is set
// when the run ended instead (the task has ended).
func (a *Activities) open(ctx context.Context, t *skilld.Task) (*session, bool, error) {
	runCtx, cancel := context.WithCancelCause(context.Background())
	s := &session{taskID: t.ID, cancel: cancel, suspended: runCtx.Done(), parks: make(chan park, 1), proceed: make(chan struct{}), used: time.Now()}
	s.busy.Store(true)
	a.runs.run(func() {
		a.Runner.Resume(runCtx, t, executor.RunOptions{Gate: s.gate, Approver: s})
		if agent.Suspended(runCtx) {
			return // not an end: the task goes on elsewhere, or later
		}
		select {
		case s.parks <- park{done: true}:
		case <-runCtx.Done():
		}
	})
	p, err := a.wait(ctx, s)
	if err != nil {
		s.cancel(agent.ErrSuspended)
		return nil, false, err
	}
	if p.done {
		return nil, true, nil
	}
	if err := a.parked(ctx, s, p); err != nil {
		s.cancel(agent.ErrSuspended)
		return nil, false, err
	}
	a.sessions.put(s)
	return s, false, nil
}

// wait waits for the run to park again, heartbeating meanwhile (a no-op
// in a local activity). When the activity is cancelled (the workflow was,
// or Temporal gave up on this worker), the run is suspended: it writes
// nothing more. When the run is suspended under it (the worker stops,
// or another step took the session over), the step fails, to be retried
// from the task log.
func (a *Activities) wait(ctx context.Context, s *session) (park, error) {
	tick := time.NewTicker(heartbeatEvery)
	defer tick.Stop()
	for {
		select {
		case p := <-s.parks:
			return p, nil
		case <-tick.C:
			activity.RecordHeartbeat(ctx)
		case <-ctx.Done():
			a.sessions.drop(s)
			return park{}, ctx.Err()
		case <-s.suspended:
			return park{}, sdkError("the run of task %s was suspended on this worker; the step goes on from the task log", s.taskID)
		}
	}
}

// report turns a parked run into the step result, recording a wait for
// approval in the task's status.
func (a *Activities) report(ctx context.Context, taskID string, p park) StepResult {
	if p.step.Kind == agent.StepApproval {
		a.status(ctx, taskID, skilld.TaskWaitingForApproval)
	}
	return StepResult{Next: Next{Kind: p.step.Kind, Tool: p.step.Tool, CallID: p.step.CallID}}
}

func (a *Activities) status(ctx context.Context, taskID string, st skilld.TaskStatus) {
	if _, err := a.DB.TaskUpdate(ctx, &store.TaskUpdateParams{ID: taskID, Status: st}); err != nil {
		a.logger().Error("recording a task's status", "task", taskID, "status", st, "err", err)
	}
}

// Finish ends a task whose workflow stops without its run ending it.
func (a *Activities) Finish(ctx context.Context, in FinishInput) error {
	if s := a.sessions.get(in.TaskID); s != nil {
		a.sessions.drop(s)
	}
	return activityError(a.Runner.Abandon(ctx, in.TaskID, skilld.TaskStatus(in.Status), in.Code, in.Message))
}

// Evict drops idle sessions every interval until ctx ends, then all.
func (a *Activities) Evict(ctx context.Context) {
	idle := a.IdleTimeout
	if idle == 0 {
		idle = 5 * time.Minute
	}
	tick := time.NewTicker(min(idle, time.Minute))
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			a.sessions.evictIdle(idle)
		case <-ctx.Done():
			a.sessions.dropAll()
			return
		}
	}
}

func (a *Activities) logger() *slog.Logger {
	if a.Logger != nil {
		return a.Logger
	}
	return slog.Default()
}

// sdkError is a retryable activity error.
func sdkError(format string, args ...any) error { return fmt.Errorf(format, args...) }

// activityError marks errors no retry fixes (a task that does not exist,
// an invalid request) as permanent; storage trouble stays retryable.
func activityError(err error) error {
	switch skilld.ErrorCode(err) {
	case "", skilld.EUNAVAILABLE, skilld.EINTERNAL:
		return err
	}
	return permanent("%s", skilld.ErrorMessage(err))
}

// Drain readies the worker to stop: its tasks go on to their next model
// call (the steps in flight finish, and the tool calls the model asked
// for run), and are handed over there.
func (a *Activities) Drain() { a.state.CompareAndSwap(running, draining) }

// Stop suspends every run on this worker, as a worker stopping must: its
// steps go to other workers, which resume the runs from their logs.
//
// It waits, at most stopWait, for the suspended runs to return, so that
// none still holds a model call, a command or its sandbox's files open
// after the worker is gone.
func (a *Activities) Stop() {
	a.state.Store(stopped)
	a.sessions.dropAll()
	if !a.runs.wait(stopWait) {
		a.logger().Warn("stopping: runs still ending", "waited", stopWait)
	}
}

// stopWait bounds how long Stop waits for suspended runs: a run stops at
// its next step or when its command is killed, well within it.
const stopWait = 30 * time.Second
