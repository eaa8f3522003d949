package service

import (
	"context"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

// Executor runs tasks. The service records a task and hands it over; the
// executor owns the run (in this process, or a Temporal worker).
type Executor interface {
	// Start runs a queued task in the background.
	Start(ctx context.Context, t *skilld.Task) error
	// Cancel stops a running task; false when this executor is not running
	// it.
	Cancel(ctx context.Context, taskID string) (bool, error)
	// Decide answers a tool call waiting for approval; ENOTFOUND when no
	// such call is waiting.
	Decide(ctx context.Context, taskID, callID string, approved bool) error
}

// Queue is implemented by executors that keep started tasks waiting for a
// place: Position is a queued task's place in line, from 1 (the next to
// start), or 0 — one more than the tasks that start before it as places
// free up, in the order the executor gives them (the local executor's
// workspaces take turns; see executor.Local.Position).
type Queue interface {
	Position(taskID string) int
}

// Ready is implemented by executors that can be unable to run tasks at all
// (no sandbox on this machine): RunTask asks it before recording a task,
// so a task that could never run is refused, not left queued.
type Ready interface {
	Ready() error
}

// ModelChecker is implemented by executors that open the models of tasks
// in this process (the local executor): CheckModel reports why a task of
// agent agentName with model ref and context window (0: the model's
// known one) could not run here, with the same code its run opens the
// model with, or nil. The service asks it before recording a task, and
// when an agent is saved, so that a model this server cannot run is
// refused at the start rather than fail the task later.
type ModelChecker interface {
	CheckModel(agentName, ref string, window int) error
}

// TimeoutLimiter is implemented by executors that bound how long a task
// may run whatever its agent's config.timeout says (the local executor's
// --task-timeout): an agent asking for more is saved with a warning, and
// its tasks get the executor's limit.
type TimeoutLimiter interface {
	TaskTimeout() time.Duration
}

// RunTask starts a task for an agent and hands it to the executor. A
// workspace at its queued cap (TaskLimits.MaxQueued) is refused with
// ERATELIMITED before anything is recorded.
func (s *Service) RunTask(ctx context.Context, a Actor, p StartTaskParams) (*skilld.Task, error) {
	if r, ok := s.exec.(Ready); ok {
		if err := r.Ready(); err != nil {
			return nil, err
		}
	}
	rec, err := s.newTask(ctx, a, p, true)
	if err != nil {
		return nil, err
	}
	release, err := s.admitTask(ctx, a.WorkspaceID)
	if err != nil {
		return nil, err
	}
	defer release()
	t, err := s.recordTask(ctx, a, rec)
	if err != nil {
		return nil, err
	}
	if s.exec == nil {
		return t, nil
	}
	if err := s.exec.Start(ctx, t); err != nil {
		// Nothing will ever run it: it is not left queued.
		now := s.cfg.Now().UTC()
		msg, code := "the task could not be started: "+skilld.ErrorMessage(err), skilld.ErrorCode(err)
		s.db.TaskUpdate(context.WithoutCancel(ctx), &store.TaskUpdateParams{ID: t.ID, ExpectedStatus: skilld.TaskQueued, Status: skilld.TaskFailed, Error: &msg, ErrorCode: &code, FinishedAt: &now})
		s.ReleaseTask(context.WithoutCancel(ctx), t.ID)
		return nil, err
	}
	// The task is recorded and running from here: a failed read of its
	// state now (the database gone as the task's first step starts) must
	// not answer "retry", which would start it a second time. The record
	// as written says what was started.
	if cur, err := s.db.TaskGet(ctx, &store.TaskGetParams{WorkspaceID: a.WorkspaceID, ID: t.ID}); err == nil {
		return cur, nil
	}
	return t, nil
}

type CancelTaskParams struct{ TaskRef }

// CancelTask stops a task (members and up). A finished task is left as it
// is; cancelling it again is not an error.
func (s *Service) CancelTask(ctx context.Context, a Actor, p CancelTaskParams) (*skilld.Task, error) {
	if err := a.can(skilld.RoleMember); err != nil {
		return nil, err
	}
	t, err := s.db.TaskGet(ctx, &store.TaskGetParams{WorkspaceID: a.WorkspaceID, ID: p.ID})
	if err != nil || t.Status.Done() {
		return t, err
	}
	if s.exec != nil {
		if ok, err := s.exec.Cancel(ctx, t.ID); err != nil || ok {
			if err != nil {
				return nil, err
			}
			s.event(ctx, a, a.WorkspaceID, "task.cancelled", t.ID)
			return s.db.TaskGet(ctx, &store.TaskGetParams{WorkspaceID: a.WorkspaceID, ID: t.ID})
		}
	}
	// Nobody runs it here (still queued, or its process is gone): mark it.
	now := s.cfg.Now().UTC()
	msg, code := "cancelled by "+a.Name, skilld.TaskCancelledCode
	t, err = s.db.TaskUpdate(ctx, &store.TaskUpdateParams{ID: t.ID, ExpectedStatus: t.Status, Status: skilld.TaskCancelled, Error: &msg, ErrorCode: &code, FinishedAt: &now})
	if err == nil {
		s.event(ctx, a, a.WorkspaceID, "task.cancelled", t.ID)
		err = s.ReleaseTask(ctx, t.ID)
	}
	return t, err
}

type DecideApprovalParams struct {
	TaskRef
	CallID   string `json:"call_id" path:"call" jsonschema:"the tool call waiting for approval"`
	Approved bool   `json:"approved" jsonschema:"true to let the call run, false to refuse it"`
}

// DecideApproval approves or rejects a tool call waiting for approval
// (admins only: approvals exist for calls the workspace wants a person to
// vet).
func (s *Service) DecideApproval(ctx context.Context, a Actor, p DecideApprovalParams) (*skilld.Task, error) {
	if err := a.can(skilld.RoleAdmin); err != nil {
		return nil, err
	}
	t, err := s.db.TaskGet(ctx, &store.TaskGetParams{WorkspaceID: a.WorkspaceID, ID: p.ID})
	if err != nil {
		return nil, err
	}
	if s.exec == nil || t.Status != skilld.TaskWaitingForApproval {
		return nil, skilld.Errorf(skilld.ECONFLICT, "task %s is %s, not waiting for approval", t.ID, t.Status)
	}
	if err := s.exec.Decide(ctx, t.ID, p.CallID, p.Approved); err != nil {
		return nil, err
	}
	s.event(ctx, a, a.WorkspaceID, "task.approval", t.ID)
	return s.db.TaskGet(ctx, &store.TaskGetParams{WorkspaceID: a.WorkspaceID, ID: t.ID})
}
