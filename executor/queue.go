package executor

import (
	"context"
	"fmt"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/executor/sched"
	"github.com/skilld/skilld/service"
)

// pool is the executor's bounded set of running tasks and the tasks
// waiting for a place: each workspace's in a line of its own, the places
// going round the workspaces (sched). Guarded by Local.mu.
type pool struct {
	sched *sched.Scheduler[*waiting]
	// rejoining counts the runs waiting to get their place back after an
	// approval: they wait with the queued tasks, but are not queued.
	rejoining int
	closed    bool // draining: no task gets a place any more
}

// place is a run's place in the pool, of its task's workspace.
type place struct {
	ws   string
	held bool
}

// waiting is a task waiting for a place: a queued (or resumed) task to
// start, or a running one that gave its place up while it waited for an
// approval and wants it back (wake).
type waiting struct {
	task   *skilld.Task
	resume bool
	wake   chan struct{}
	// place is set once this waiting got a place.
	place *place
	// parent is what the task was started under (see execute).
	parent context.Context
}

// isTask matches the waiting of a task.
func isTask(taskID string) func(*waiting) bool {
	return func(w *waiting) bool { return w.task != nil && w.task.ID == taskID }
}

// enqueue adds a task to its workspace's line (a resumed one ahead of
// every line: it held a place before) and starts what fits.
func (l *Local) enqueue(ctx context.Context, t *skilld.Task, resume bool) error {
	maxRunning, err := l.maxRunning(ctx, t.WorkspaceID)
	if err != nil {
		return err
	}
	w := &waiting{task: t, resume: resume, parent: context.WithoutCancel(ctx)}
	l.mu.Lock()
	l.tasks.Add(1)
	if resume {
		l.pool.sched.PushFirst(t.WorkspaceID, maxRunning, w)
	} else {
		l.pool.sched.Push(t.WorkspaceID, maxRunning, w)
	}
	l.mu.Unlock()
	l.dispatch()
	return nil
}

// maxRunning is the most tasks of a workspace that may hold places at
// once (0: no cap but the pool's).
func (l *Local) maxRunning(ctx context.Context, workspaceID string) (int, error) {
	if l.cfg.Service == nil {
		return 0, nil
	}
	lim, err := l.cfg.Service.TaskLimits(ctx, workspaceID)
	if err != nil {
		return 0, fmt.Errorf("reading the task caps of workspace %s: %w", workspaceID, err)
	}
	return lim.MaxRunning, nil
}

// LimitsChanged applies a workspace's new running cap to the tasks here
// at once: a raised cap starts its waiting tasks if places are free
// (service.LimitWatcher).
func (l *Local) LimitsChanged(workspaceID string, lim service.TaskLimits) {
	l.mu.Lock()
	l.pool.sched.SetCap(workspaceID, lim.MaxRunning)
	l.mu.Unlock()
	l.dispatch()
}

// dequeue takes a task out of the queue; it reports whether it was there.
func (l *Local) dequeue(taskID string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.pool.sched.Remove(isTask(taskID)) {
		return false
	}
	l.tasks.Done()
	return true
}

// Queued is how many tasks wait for a place (not counting running tasks
// waiting to get theirs back after an approval).
func (l *Local) Queued() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.pool.sched.Waiting() - l.pool.rejoining
}

// Position is a queued task's place in line, from 1 (the next to start),
// or 0 when it is not waiting here (service.Queue): one more than the
// tasks that start before it as places free up, with the places going
// round the workspaces that have tasks waiting — the tasks resumed after
// a restart and the runs back from an approval first, then one task of
// each workspace in turn, the one served least recently first. A
// workspace at its running cap is counted as if it were not, so its
// tasks may start later than their position says and others' sooner.
func (l *Local) Position(taskID string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.pool.sched.Position(isTask(taskID))
}

// WorkspaceLoad is one workspace's tasks in the pool (Busiest).
type WorkspaceLoad = sched.Load

// Busiest returns the n workspaces with the most tasks waiting here, then
// the most places held, for metrics that must stay a few series.
func (l *Local) Busiest(n int) []WorkspaceLoad {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.pool.sched.Busiest(n)
}

// Running is how many places of the pool are held.
func (l *Local) Running() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.pool.sched.Held()
}

// dispatch gives free places to what waits next.
func (l *Local) dispatch() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for !l.pool.closed {
		w, ws, ok := l.pool.sched.Next()
		if !ok {
			return
		}
		if w.wake != nil {
			l.pool.rejoining--
			w.place.held = true
			close(w.wake)
			continue
		}
		l.wg.Go(func() {
			p := &place{ws: ws, held: true}
			defer l.tasks.Done()
			defer l.leave(p)
			l.execute(w.parent, w.task, w.resume, p)
		})
	}
}

// leave gives a place up, when held.
func (l *Local) leave(p *place) {
	l.mu.Lock()
	if p.held {
		p.held = false
		l.pool.sched.Release(p.ws)
	}
	l.mu.Unlock()
	l.dispatch()
}

// rejoin waits for a place again, ahead of the queued tasks (the task was
// running before it gave its place up), within its workspace's cap.
func (l *Local) rejoin(ctx context.Context, p *place) error {
	maxRunning, err := l.maxRunning(ctx, p.ws)
	if err != nil {
		return err
	}
	w := &waiting{wake: make(chan struct{}), place: p}
	l.mu.Lock()
	l.pool.rejoining++
	l.pool.sched.PushFirst(p.ws, maxRunning, w)
	l.mu.Unlock()
	l.dispatch()
	select {
	case <-w.wake:
		return nil
	case <-ctx.Done():
		l.mu.Lock()
		if l.pool.sched.Remove(func(o *waiting) bool { return o == w }) {
			l.pool.rejoining--
		}
		l.mu.Unlock()
		return ctx.Err()
	}
}

// Drain stops giving places, lets the running tasks go on for up to
// timeout, then suspends those still running (agent.ErrSuspended) and
// waits for them to stop. Nothing is lost: suspended and queued tasks keep
// their status and logs, and Recover resumes them at the next start.
func (l *Local) Drain(timeout time.Duration) {
	defer l.adopting.Wait()
	defer l.halt()
	l.mu.Lock()
	l.pool.closed = true
	l.mu.Unlock()
	done := make(chan struct{})
	go func() { l.wg.Wait(); close(done) }()
	if timeout > 0 {
		select {
		case <-done:
			return
		case <-time.After(timeout):
		}
	}
	l.halt()
	l.mu.Lock()
	for _, r := range l.running {
		r.cancel(agent.ErrSuspended)
	}
	l.mu.Unlock()
	<-done
}

// halt tells what waits for the store to give up, and the search for
// tasks no run holds to end.
func (l *Local) halt() { l.stopOnce.Do(func() { close(l.stop) }) }

// Shutdown suspends every running task now (Drain without a grace
// period).
func (l *Local) Shutdown() { l.Drain(0) }

// Wait blocks until every task started in the background has stopped,
// those still queued included.
func (l *Local) Wait() { l.tasks.Wait() }
