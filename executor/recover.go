package executor

import (
	"context"
	"slices"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/sandbox"
	"github.com/skilld/skilld/store"
)

// Recover picks up the tasks a previous process left: those that were
// running or waiting for approval are resumed from their logs, ahead of
// the queued ones, which start in the order they were created. Call it
// once, at start, before the server takes requests; from then on the
// executor also adopts, every AdoptEvery, the tasks no run holds (adopt).
func (l *Local) Recover(ctx context.Context) error {
	if err := l.Ready(); err != nil {
		// They would only fail here; a start that can run them resumes them.
		l.cfg.Logger.Warn("tasks left by a previous run are not resumed", "reason", skilld.ErrorMessage(err))
		return nil
	}
	resume, queued, err := l.unfinished(ctx)
	if err != nil {
		return err
	}
	byAge := func(a, b *skilld.Task) int { return a.CreatedAt.Compare(b.CreatedAt) }
	slices.SortFunc(resume, byAge)
	slices.SortFunc(queued, byAge)
	if len(resume)+len(queued) > 0 {
		l.cfg.Logger.Info("recovering tasks", "resumed", len(resume), "queued", len(queued))
	}
	l.sweepSandboxes(ctx)
	for _, t := range append(resume, queued...) {
		if err := l.enqueue(ctx, t, t.Status != skilld.TaskQueued); err != nil {
			return err
		}
	}
	l.adopting.Go(func() { l.adopt(context.WithoutCancel(ctx)) })
	return nil
}

// unfinished lists the tasks of every workspace that have not ended: those
// started (running, waiting for approval) and those queued.
func (l *Local) unfinished(ctx context.Context) (started, queued []*skilld.Task, err error) {
	for off := 0; ; off += store.MaxPageSize {
		ws, err := l.cfg.DB.WorkspaceList(ctx, &store.WorkspaceListParams{Page: store.Page{Limit: store.MaxPageSize, Offset: off}})
		if err != nil {
			return nil, nil, err
		}
		for _, w := range ws {
			for _, st := range []skilld.TaskStatus{skilld.TaskRunning, skilld.TaskWaitingForApproval, skilld.TaskQueued} {
				tasks, err := l.tasksIn(ctx, w.ID, st)
				if err != nil {
					return nil, nil, err
				}
				if st == skilld.TaskQueued {
					queued = append(queued, tasks...)
				} else {
					started = append(started, tasks...)
				}
			}
		}
		if len(ws) < store.MaxPageSize {
			return started, queued, nil
		}
	}
}

// sweepSandboxes removes the sandboxes of tasks that have ended, or that no
// longer exist: a server that died between a task's end and the removal of
// its sandbox leaves it behind (as root, with its mounts). A sandbox of a
// task that has not ended is left alone, wherever it runs.
func (l *Local) sweepSandboxes(ctx context.Context) {
	lister, ok := l.cfg.Sandboxes.(sandbox.Lister)
	if !ok || l.cfg.KeepSandboxes {
		return
	}
	ids, err := lister.List(ctx)
	if err != nil {
		l.cfg.Logger.Warn("listing sandboxes", "err", err)
		return
	}
	for _, id := range ids {
		t, err := l.cfg.DB.TaskGet(ctx, &store.TaskGetParams{ID: id})
		if err == nil && !t.Status.Done() || err != nil && skilld.ErrorCode(err) != skilld.ENOTFOUND {
			continue
		}
		sb, err := l.cfg.Sandboxes.Create(ctx, sandbox.CreateParams{ID: id, Reopen: true})
		if err == nil {
			err = sb.Destroy(ctx)
		}
		if err != nil {
			l.cfg.Logger.Warn("removing the sandbox of an ended task", "task", id, "err", err)
			continue
		}
		l.cfg.Logger.Info("removed the sandbox of an ended task", "task", id)
	}
}

// tasksIn lists every task of a workspace in a status, snapshots
// included. All pages are read before any task changes status, which
// would shift the pages.
func (l *Local) tasksIn(ctx context.Context, workspaceID string, st skilld.TaskStatus) ([]*skilld.Task, error) {
	var out []*skilld.Task
	for off := 0; ; off += store.MaxPageSize {
		tasks, _, err := l.cfg.DB.TaskList(ctx, &store.TaskListParams{WorkspaceID: workspaceID, Status: st, Page: store.Page{Limit: store.MaxPageSize, Offset: off}})
		if err != nil {
			return nil, err
		}
		out = append(out, tasks...)
		if len(tasks) < store.MaxPageSize {
			return out, nil
		}
	}
}
