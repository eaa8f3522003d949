package temporal

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skilld/skilld/agent"
)

// A session is a task's run living on a worker between activities. The run
// goes on by itself until it reaches its next step (a model call, a tool
// call, a wait for approval: agent.Config.Gate), where it parks; a step
// activity lets it perform that one step and waits until it parks again.
// Keeping the run in memory between steps saves replaying the log for
// each; a session lost (another worker, a restart, an idle eviction) costs
// only that replay.
type session struct {
	taskID string
	cancel context.CancelCauseFunc
	// suspended is closed when the session is dropped: its run writes
	// nothing more, and a step waiting on it gives up.
	suspended <-chan struct{}
	// busy is held by the step activity using the session. Two at once
	// happen only when one is left over from a workflow task or an
	// activity that Temporal gave up on while this worker still ran it.
	busy atomic.Bool
	// parks receives each place the run parks at, and its end.
	parks   chan park
	proceed chan struct{}
	// at is where it is parked now (set by the activity that waited), and
	// seq the task log's last entry then. A log that has moved on since
	// means another worker ran the task further: this session is stale.
	at       park
	seq      int64
	approved bool // the decision the next approval step hands the run
	used     time.Time
}

// park is a step the run waits to perform, or its end.
type park struct {
	step agent.Step
	done bool
}

// gate is the run's agent.Config.Gate.
func (s *session) gate(ctx context.Context, st agent.Step) error {
	select {
	case s.parks <- park{step: st}:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	select {
	case <-s.proceed:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// Approve hands the run the decision the Approval step brought: the wait
// itself happened in the workflow (agent.Approver).
func (s *session) Approve(context.Context, agent.ApprovalRequest) (bool, error) {
	return s.approved, nil
}

// sessions are a worker's sessions, by task.
type sessions struct {
	mu sync.Mutex
	m  map[string]*session
}

func (ss *sessions) get(taskID string) *session {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.m[taskID]
}

func (ss *sessions) put(s *session) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.m == nil {
		ss.m = map[string]*session{}
	}
	ss.m[s.taskID] = s
}

// drop removes a session, suspending its run (when it still runs): nothing
// more is written by it.
func (ss *sessions) drop(s *session) {
	ss.mu.Lock()
	if ss.m[s.taskID] == s {
		delete(ss.m, s.taskID)
	}
	ss.mu.Unlock()
	s.cancel(agent.ErrSuspended)
}

// evictIdle drops the sessions parked for longer than idle (a task waiting
// for a person): the next step rebuilds the run from the log. A session a
// step is using (a long tool call) is not idle.
func (ss *sessions) evictIdle(idle time.Duration) {
	ss.mu.Lock()
	var old []*session
	for _, s := range ss.m {
		if time.Since(s.used) > idle && !s.busy.Load() {
			old = append(old, s)
		}
	}
	ss.mu.Unlock()
	for _, s := range old {
		ss.drop(s)
	}
}

// dropAll suspends every session (the worker stops).
func (ss *sessions) dropAll() {
	ss.mu.Lock()
	all := make([]*session, 0, len(ss.m))
	for _, s := range ss.m {
		all = append(all, s)
	}
	ss.mu.Unlock()
	for _, s := range all {
		ss.drop(s)
	}
}

// runGroup counts running goroutines, as a sync.WaitGroup would, but may
// be waited for while runs still start (a step begun as the worker stops)
// and waits at most a while.
type runGroup struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n drops to 0; nil when none waits
}

// run runs f in a goroutine of the group.
func (g *runGroup) run(f func()) {
	g.mu.Lock()
	g.n++
	g.mu.Unlock()
	go func() {
		defer g.done()
		f()
	}()
}

func (g *runGroup) done() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.n--; g.n == 0 && g.idle != nil {
		close(g.idle)
		g.idle = nil
	}
}

// wait reports whether every run returned within d.
func (g *runGroup) wait(d time.Duration) bool {
	g.mu.Lock()
	if g.n == 0 {
		g.mu.Unlock()
		return true
	}
	if g.idle == nil {
		g.idle = make(chan struct{})
	}
	idle := g.idle
	g.mu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-idle:
		return true
	case <-t.C:
		return false
	}
}
