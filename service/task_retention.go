package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

// MinTaskRetention is the shortest retention there may be, other than 0
// (keep forever): a client following a task's events may still be reading
// them for a while after the task ended.
const MinTaskRetention = time.Minute

// How the retention sweeper paces itself: a pass a minute, each deleting
// at most TaskSweepBatch tasks (720,000 a day), so that a backlog found
// when retention is first turned on drains without holding the database's
// writers for long at a time.
const (
	TaskSweepInterval = time.Minute
	TaskSweepBatch    = 500
)

// CheckTaskRetention reports whether d may be a retention: 0, or at least
// MinTaskRetention.
func CheckTaskRetention(d time.Duration) error {
	if d != 0 && d < MinTaskRetention {
		return skilld.Errorf(skilld.EINVALID, "a task retention must be 0 (keep finished tasks forever) or at least %s, not %s", MinTaskRetention, d)
	}
	return nil
}

// parseTaskRetention reads a workspace's retention setting, a Go duration.
func parseTaskRetention(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, skilld.Errorf(skilld.EINVALID, "a task retention is a duration such as 720h, or 0 to keep finished tasks forever, not %q", s)
	}
	return d, CheckTaskRetention(d)
}

// taskRetention is how long workspace w keeps finished tasks: its own
// setting, or the server's; 0 is forever.
func (s *Service) taskRetention(w *skilld.Workspace) (time.Duration, error) {
	if w.TaskRetention == "" {
		return s.cfg.TaskRetention, nil
	}
	d, err := parseTaskRetention(w.TaskRetention)
	if err != nil {
		return 0, fmt.Errorf("workspace %s: %w", w.Name, err)
	}
	return d, nil
}

// DeleteExpiredTasks deletes, across workspaces, at most limit finished
// tasks that finished longer ago than their workspace keeps them, with
// their logs and outputs, and then frees the packages and blobs nothing
// refers to any more. It returns how many tasks it deleted. A task another
// server deleted first is not counted and not an error, so servers
// sharing a database may all sweep. It goes on past a failure and returns
// every failure with the count.
func (s *Service) DeleteExpiredTasks(ctx context.Context, limit int) (int, error) {
	var (
		deleted         int
		errs            []error
		packages, blobs []string
		now             = s.cfg.Now()
	)
pages:
	for offset := 0; deleted < limit; offset += store.MaxPageSize {
		page, err := s.db.WorkspaceList(ctx, &store.WorkspaceListParams{Page: store.Page{Limit: store.MaxPageSize, Offset: offset}})
		if err != nil {
			errs = append(errs, err)
			break
		}
		for _, w := range page {
			if deleted >= limit || ctx.Err() != nil {
				break pages // what was deleted is freed below, even when stopping
			}
			keep, err := s.taskRetention(w)
			if err != nil {
				errs = append(errs, err)
			}
			if keep == 0 {
				continue
			}
			ids, err := s.db.TaskListFinished(ctx, &store.TaskListFinishedParams{WorkspaceID: w.ID, Before: now.Add(-keep), Limit: limit - deleted})
			if err != nil {
				errs = append(errs, err)
				continue
			}
			for _, id := range ids {
				res, err := s.db.TaskDelete(ctx, &store.TaskDeleteParams{WorkspaceID: w.ID, ID: id})
				if skilld.ErrorCode(err) == skilld.ENOTFOUND {
					continue
				}
				if err != nil {
					errs = append(errs, err)
					continue
				}
				deleted++
				s.stored.forget(w.ID)
				packages, blobs = append(packages, res.Packages...), append(blobs, res.Outputs...)
			}
		}
		if len(page) < store.MaxPageSize {
			break
		}
	}
	// One pass frees what its tasks held at once, under one exclusive
	// blob guard rather than one per task.
	if err := s.packages.Free(ctx, packages, blobs); err != nil {
		errs = append(errs, fmt.Errorf("freeing the storage of expired tasks: %w", err))
	}
	return deleted, errors.Join(errs...)
}

// TaskSweep paces SweepTasks and hears from it.
type TaskSweep struct {
	// Interval is the time between passes (default TaskSweepInterval).
	Interval time.Duration
	// Batch is the most tasks one pass deletes (default TaskSweepBatch).
	Batch int
	// Report, when set, is told after each pass how many tasks it
	// deleted and what failed (nil when nothing did).
	Report func(deleted int, err error)
}

// SweepTasks deletes expired tasks (DeleteExpiredTasks) at once and then
// every interval, until ctx is done; a pass that is under way when ctx
// ends stops at its next store call, and frees what it deleted before it
// returns.
func (s *Service) SweepTasks(ctx context.Context, o TaskSweep) {
	sweep(ctx, orDefault(o.Interval, TaskSweepInterval), func() (int, error) {
		return s.DeleteExpiredTasks(ctx, orDefault(o.Batch, TaskSweepBatch))
	}, o.Report)
}

// orDefault is v, or d when v is not positive.
func orDefault[T int | time.Duration](v, d T) T {
	if v <= 0 {
		return d
	}
	return v
}

// sweep runs pass at once and then every interval, until ctx is done,
// telling report (when set) how each went; a pass cut short by ctx is
// not a failure.
func sweep(ctx context.Context, interval time.Duration, pass func() (int, error), report func(int, error)) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		n, err := pass()
		if ctx.Err() != nil {
			err = nil
		}
		if report != nil {
			report(n, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
