package service

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

// TaskLimits are a workspace's caps on its tasks; 0 is no cap. The
// server's defaults are Config.TaskLimits; an instance admin may give a
// workspace its own (UpdateWorkspace).
type TaskLimits struct {
	// MaxRunning is how many of the workspace's tasks may run at once:
	// places of the local executor's pool (a task waiting for an
	// approval holds none). Its other tasks wait, queued, while other
	// workspaces' run. The Temporal executor does not bound it.
	MaxRunning int
	// MaxQueued is how many of the workspace's tasks may wait to begin
	// (status queued); a start past it is refused with ERATELIMITED,
	// before anything is recorded. Every executor is held to it.
	MaxQueued int
}

// DefaultMaxQueuedTasks is skilld serve's default queued cap per
// workspace (--workspace-max-queued). A queued task holds its row and its
// snapshot (a few KiB) in the local executor's memory until it starts;
// a thousand per workspace is sixteen turns of the default pool of 64,
// more than a tenant's burst, and a client that queues without end is
// told to back off long before the database or the server's memory feel
// it.
const DefaultMaxQueuedTasks = 1000

// MaxTaskLimit is the largest cap a workspace may be given: far beyond
// any pool, and small enough to be no one's typo for "none" (that is 0).
const MaxTaskLimit = 1_000_000

// QueueFullRetryAfter is the Retry-After of a start refused at the queued
// cap. Room comes back as the workspace's tasks begin, which takes a task
// ending somewhere: seconds to minutes. Ten seconds keeps a polling client
// from hammering the server without leaving it idle for long.
const QueueFullRetryAfter = 10 * time.Second

// LimitWatcher is implemented by executors that hold a workspace to its
// running cap themselves (the local executor): UpdateWorkspace tells them
// a workspace's new limits at once, so that a raised cap starts its
// waiting tasks without waiting for one of its running tasks to end.
type LimitWatcher interface {
	LimitsChanged(workspaceID string, l TaskLimits)
}

// TaskLimits returns the caps that hold for a workspace's tasks now: its
// own, or the server's defaults. A change made through another server is
// seen within AuthCacheTTL (through this one, at once).
func (s *Service) TaskLimits(ctx context.Context, workspaceID string) (TaskLimits, error) {
	w, err := s.findWorkspace(ctx, workspaceID)
	if err != nil {
		return TaskLimits{}, err
	}
	return s.limitsOf(w), nil
}

func (s *Service) limitsOf(w *skilld.Workspace) TaskLimits {
	l := s.cfg.TaskLimits
	if w.MaxRunningTasks != nil {
		l.MaxRunning = *w.MaxRunningTasks
	}
	if w.MaxQueuedTasks != nil {
		l.MaxQueued = *w.MaxQueuedTasks
	}
	return l
}

// admitTask checks a new task of the workspace against its storage quota
// and its queued cap.
// When a cap holds, it returns with the workspace's admission lock held
// until release: recording and starting the task happen under it, so
// that starts racing on this server cannot all pass a cap with room for
// one. (Servers sharing a database each hold their own locks: together
// they may pass it by at most one start each.)
func (s *Service) admitTask(ctx context.Context, workspaceID string) (release func(), err error) {
	w, err := s.findWorkspace(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	if err := s.checkStorage(ctx, w); err != nil {
		return nil, err
	}
	lim := s.limitsOf(w)
	if lim.MaxQueued <= 0 {
		return func() {}, nil
	}
	unlock := s.admission.lock(w.ID)
	_, queued, err := s.db.TaskList(ctx, &store.TaskListParams{WorkspaceID: w.ID, Status: skilld.TaskQueued, Page: store.Page{Limit: 1}})
	if err != nil {
		unlock()
		return nil, fmt.Errorf("counting the queued tasks of workspace %q: %w", w.Name, err)
	}
	if queued >= lim.MaxQueued {
		unlock()
		return nil, queueFull(w, queued)
	}
	return unlock, nil
}

// queueFull is the refusal of a start at the workspace's queued cap: it
// names the cap, where it comes from and how to raise it, and carries
// the Retry-After (the retry_after detail).
func queueFull(w *skilld.Workspace, queued int) error {
	source := "the server's --workspace-max-queued"
	if w.MaxQueuedTasks != nil {
		source = "the workspace's own max_queued_tasks"
	}
	after := int(QueueFullRetryAfter / time.Second)
	e := skilld.Errorf(skilld.ERATELIMITED, "workspace %q has %d tasks queued, its limit (%s): no more may wait to start until some of them have; "+
		"retry in %d s, or ask an instance admin to raise it (PATCH /v1/workspaces/%s {\"max_queued_tasks\": N})", w.Name, queued, source, after, w.Name)
	e.Details = []skilld.Detail{{Field: "retry_after", Message: strconv.Itoa(after)}}
	return e
}

// admission holds a lock per workspace while one of its tasks is
// admitted; a workspace's lock is dropped once nobody holds or waits for
// it, so the map holds only workspaces starting tasks right now.
type admission struct {
	mu    sync.Mutex
	locks map[string]*admissionLock
}

type admissionLock struct {
	sync.Mutex
	users int // holding or waiting
}

func (ad *admission) lock(workspaceID string) (unlock func()) {
	ad.mu.Lock()
	if ad.locks == nil {
		ad.locks = map[string]*admissionLock{}
	}
	l := ad.locks[workspaceID]
	if l == nil {
		l = &admissionLock{}
		ad.locks[workspaceID] = l
	}
	l.users++
	ad.mu.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		ad.mu.Lock()
		if l.users--; l.users == 0 {
			delete(ad.locks, workspaceID)
		}
		ad.mu.Unlock()
	}
}
