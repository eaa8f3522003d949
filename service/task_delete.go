package service

import (
	"context"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

type DeleteTaskParams struct{ TaskRef }

// DeleteTask deletes a finished task with its log and its stored outputs
// (workspace admins, and the member who started it: a task's input and
// output are its starter's, and an admin's to clean up). A task that is
// queued, running or waiting for approval is refused with ECONFLICT: its
// run still writes to it, so it is cancelled first. Packages and blobs
// that nothing else uses any more are deleted too.
func (s *Service) DeleteTask(ctx context.Context, a Actor, p DeleteTaskParams) error {
	if err := a.can(skilld.RoleMember); err != nil {
		return err
	}
	t, err := s.db.TaskGet(ctx, &store.TaskGetParams{WorkspaceID: a.WorkspaceID, ID: p.ID})
	if err != nil {
		return err
	}
	if err := a.mayDelete(t); err != nil {
		return err
	}
	if !t.Status.Done() {
		return skilld.Errorf(skilld.ECONFLICT, "task %s is %s: cancel it first, then delete it", t.ID, t.Status)
	}
	res, err := s.db.TaskDelete(ctx, &store.TaskDeleteParams{WorkspaceID: a.WorkspaceID, ID: t.ID})
	if err != nil {
		return err
	}
	s.event(ctx, a, a.WorkspaceID, "task.deleted", t.ID)
	s.stored.forget(a.WorkspaceID) // its room is there for the next start
	// The task is gone either way; storage that could not be freed is
	// garbage fsck --repair removes, not a broken task, so it is not
	// reported as a failed delete.
	s.freeTask(ctx, res)
	return nil
}

// mayDelete allows admins (instance admins act as admins) and the token
// that started the task. A task from before starters were recorded has
// no starter to match, so only admins delete it.
func (a Actor) mayDelete(t *skilld.Task) error {
	if a.can(skilld.RoleAdmin) == nil {
		return nil
	}
	if snap, err := TaskSnapshot(t); err == nil && snap.Starter != nil && snap.Starter.TokenID != "" && snap.Starter.TokenID == a.TokenID {
		return nil
	}
	return skilld.Errorf(skilld.EFORBIDDEN, "task %s was started by %s: only its starter and workspace admins may delete it", t.ID, t.CreatedBy)
}

// freeTask deletes what only a deleted task referred to: the packages it
// still pinned and its outputs' blobs, once nothing else refers to them.
// It runs after the task's rows are committed, so a blob is never removed
// while a row still names it; what it cannot remove stays unreferenced
// for fsck --repair.
func (s *Service) freeTask(ctx context.Context, res *store.TaskDeleteResult) error {
	return s.packages.Free(ctx, res.Packages, res.Outputs)
}
