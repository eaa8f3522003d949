package executor

import (
	"context"
	"slices"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
)

// pool is the executor's bounded set of running tasks and the queue of
// those waiting for a place, first come first served. Guarded by Local.mu.
type pool struct {
	max    int
	active int // places held
	queue  []*waiting
	closed bool // draining: no task gets a place any more
}

// waiting is a task waiting for a place: a queued (or resumed) task to
// start, or a running one that gave its place up while it waited for an
// approval and wants it back (wake).
type waiting struct {
	task   *skilld.Task
	resume bool
	wake   chan struct{}
	// held is set once this waiting got a place.
	held *bool
	// parent is what the task was started under (see execute).
	parent context.Context
}

// enqueue adds a task to the end of the queue and starts what fits.
func (l *Local) enqueue(ctx context.Context, t *skilld.Task, resume bool) {
	l.mu.Lock()
	l.tasks.Add(1)
	l.pool.queue = append(l.pool.queue, &waiting{task: t, resume: resume, parent: context.WithoutCancel(ctx)})
	l.mu.Unlock()
	l.dispatch()
}

// dequeue takes a task out of the queue; it reports whether it was there.
func (l *Local) dequeue(taskID string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, w := range l.pool.queue {
		if w.task != nil && w.task.ID == taskID {
			l.pool.queue = slices.Delete(l.pool.queue, i, i+1)
			l.tasks.Done()
			return true
		}
	}
	return false
}

// Queued is how many tasks wait in the queue for a place (not counting
// running tasks waiting to get theirs back after an approval).
func (l *Local) Queued() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, w := range l.pool.queue {
		if w.task != nil {
			n++
		}
	}
	return n
}

// Position is a task's place in the queue, from 1; 0 when it is not
// waiting here (service.Queue).
func (l *Local) Position(taskID string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, w := range l.pool.queue {
		if w.task == nil {
			continue
		}
		n++
		if w.task.ID == taskID {
			return n
		}
	}
	return 0
}

// dispatch gives free places to the first in the queue.
func (l *Local) dispatch() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for !l.pool.closed && l.pool.active < l.pool.max && len(l.pool.queue) > 0 {
		w := l.pool.queue[0]
		l.pool.queue = l.pool.queue[1:]
		l.pool.active++
		if w.wake != nil {
			*w.held = true
			close(w.wake)
			continue
		}
		l.wg.Go(func() {
			held := true
			defer l.tasks.Done()
			defer l.leave(&held)
			l.execute(w.parent, w.task, w.resume, &held)
		})
	}
}

// leave gives a place up, when held.
func (l *Local) leave(held *bool) {
	l.mu.Lock()
	if *held {
		*held = false
		l.pool.active--
	}
	l.mu.Unlock()
	l.dispatch()
}

// rejoin waits for a place again, ahead of the queue (the task was running
// before it gave its place up).
func (l *Local) rejoin(ctx context.Context, held *bool) error {
	w := &waiting{wake: make(chan struct{}), held: held}
	l.mu.Lock()
	l.pool.queue = append([]*waiting{w}, l.pool.queue...)
	l.mu.Unlock()
	l.dispatch()
	select {
	case <-w.wake:
		return nil
	case <-ctx.Done():
		l.mu.Lock()
		if i := slices.Index(l.pool.queue, w); i >= 0 {
			l.pool.queue = slices.Delete(l.pool.queue, i, i+1)
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
