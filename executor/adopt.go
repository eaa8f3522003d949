package executor

import (
	"context"
	"slices"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

// Defaults of the heartbeat and of the search for tasks no run holds.
const (
	DefaultHeartbeat  = 15 * time.Second
	DefaultAdoptEvery = 30 * time.Second
)

// heartbeat touches the task's row every Heartbeat while its run lives, so
// that a run anywhere (this process, a foreground `skilld run` on the
// same database) shows it is alive. Failures are ignored: a store that
// does not answer is the run's problem, and the next beat tries again.
func (l *Local) heartbeat(ctx context.Context, taskID string) (stop func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(l.cfg.Heartbeat)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				bctx, bcancel := context.WithTimeout(ctx, l.cfg.Heartbeat)
				l.cfg.DB.TaskUpdate(bctx, &store.TaskUpdateParams{ID: taskID})
				bcancel()
			}
		}
	}()
	return func() { cancel(); <-done }
}

// adopt looks, every AdoptEvery until the executor stops, for tasks that
// have not ended and that no run holds — their run is gone without ending
// them: a bug, a run that gave up — and runs them here: started ones are
// resumed from their logs, queued ones queued. A task is taken only when
// it is not this executor's, its row has not changed for four heartbeats,
// and it had not changed at the previous look either: a live run anywhere
// beats more often than that, and a task between two of this executor's
// steps (just out of the queue, not yet registered) changes its row.
func (l *Local) adopt(ctx context.Context) {
	tick := time.NewTicker(l.cfg.AdoptEvery)
	defer tick.Stop()
	seen := map[string]time.Time{} // task → its row's updated_at when last found idle
	for {
		select {
		case <-l.stop:
			return
		case <-tick.C:
		}
		l.mu.Lock()
		closed := l.pool.closed
		l.mu.Unlock()
		if closed {
			return
		}
		started, queued, err := l.unfinished(ctx)
		if err != nil {
			continue // the store is away; look again at the next tick
		}
		idle := time.Now().Add(-4 * l.cfg.Heartbeat)
		next := map[string]time.Time{}
		for _, t := range slices.Concat(started, queued) {
			if l.owns(t.ID) || t.UpdatedAt.After(idle) {
				continue
			}
			if at, ok := seen[t.ID]; !ok || !at.Equal(t.UpdatedAt) {
				next[t.ID] = t.UpdatedAt
				continue
			}
			l.cfg.Logger.Warn("adopting a task no run holds", "task", t.ID, "status", t.Status, "idle_since", t.UpdatedAt)
			l.enqueue(ctx, t, t.Status != skilld.TaskQueued)
		}
		seen = next
	}
}

// owns reports whether the task is this executor's: running here, or
// waiting in its queue.
func (l *Local) owns(taskID string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.running[taskID] != nil {
		return true
	}
	return l.pool.sched.Position(isTask(taskID)) > 0
}
