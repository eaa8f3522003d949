// Package executor runs tasks. Local runs them in this process: each task
// is a goroutine running the agent runtime on the task's snapshot, writing
// every message and event to the store's task log, with the task's status
// kept in its row (queued → running ⇄ waiting_for_approval → completed,
// failed or cancelled).
//
// Tasks are durable. A bounded pool runs at most MaxRunning at once; the
// rest wait, each workspace's first come first served in a line of its
// own, and a freed place goes round the workspaces (executor/sched), so
// one workspace's backlog does not hold the others' tasks back. A
// workspace may also be capped in the places it holds
// (service.TaskLimits). Every step's result is in the task
// log before the next step starts, so a task stopped by a crash, a
// shutdown or a restart is resumed by Recover from its last logged step
// (agent.Task.Resume): nothing it did is done twice, and its sandbox is
// taken over with its files.
package executor

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/blob"
	"github.com/skilld/skilld/executor/sched"
	"github.com/skilld/skilld/sandbox"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/skillsearch"
	"github.com/skilld/skilld/store"
)

// Defaults of the pool and of a task's time.
const (
	DefaultMaxRunning  = 64
	DefaultTaskTimeout = time.Hour
)

// Config is what the local executor needs.
type Config struct {
	Service *service.Service
	// DB is where the tasks' rows, logs and outputs are: the part of the
	// store an executor may touch.
	DB    service.TaskRecords
	Blobs blob.Store
	// Sandboxes makes each task's sandbox (named by the task's ID). When
	// it is nil, SandboxError says why, and no task runs.
	Sandboxes    sandbox.Provider
	SandboxError error
	// KeepSandboxes keeps a task's sandbox after the task ended (for
	// looking at what it left); by default it is removed.
	KeepSandboxes bool
	// AllowNetwork lets agents whose config asks for it reach the network
	// from their sandbox; without it such a task fails at start.
	AllowNetwork bool
	// OpenModel returns the model for an agent's model reference
	// ("openai:gpt-4o-mini") and the provider's name for it.
	OpenModel func(ref string) (model.Model, string, error)
	// Tokenizer returns the token counter for a model reference.
	Tokenizer func(ref string) (agent.Counter, error)
	// Window returns the known context window of a model reference.
	Window func(ref string) (int, bool)
	// MaxRunning bounds the tasks running at once (DefaultMaxRunning);
	// the others wait as queued. A task waiting for approval gives its
	// place up until the decision. Each workspace's own cap comes from
	// Service.TaskLimits.
	MaxRunning int
	// TaskTimeout is how long a task may run, from its start, when its
	// agent sets no timeout (DefaultTaskTimeout), and the most it may run
	// when its agent sets a longer one.
	TaskTimeout time.Duration
	// StorageRetry is how long a task waits out unreachable storage (its
	// log, its packages, recording its end) before it fails; 0 means
	// agent.DefaultStorageRetry.
	StorageRetry time.Duration
	// Heartbeat is how often a run touches its task's row to show it is
	// alive (DefaultHeartbeat); AdoptEvery how often the executor looks
	// for tasks no run holds (DefaultAdoptEvery), once Recover ran.
	// OutputBudget bounds the bytes of large tool outputs one task keeps
	// (DefaultOutputBudget): a task past it is stopped, failed with
	// too_large.
	OutputBudget int64
	Heartbeat    time.Duration
	AdoptEvery   time.Duration
	Logger       *slog.Logger
	// Observer, when set, sees every run and its events (metrics,
	// traces).
	Observer Observer
}

// Local runs tasks in this process.
type Local struct {
	cfg Config

	mu      sync.Mutex
	running map[string]*running
	watch   map[string][]chan struct{}
	pool    pool
	wg      sync.WaitGroup // the goroutines of running tasks
	tasks   sync.WaitGroup // tasks queued or running in the background
	// stop is closed when the executor stops waiting for its runs (Drain
	// past its grace): what retries until the store answers gives up.
	stop     chan struct{}
	stopOnce sync.Once
	adopting sync.WaitGroup // the search for tasks no run holds
	// indexes keeps the search_skills indexes of agents with more skills
	// than their catalog lists, for their next tasks.
	indexes skillsearch.Cache
}

// running is a task this executor runs now.
type running struct {
	cancel  context.CancelCauseFunc
	pending map[string]chan bool // call id → decision
	// held is the run's place in the pool (nil outside it: a foreground
	// run); it is given up while the run waits for an approval.
	held *place
}

// Causes of a run's end other than its own: they decide the status.
var (
	errCancelled = errors.New("the task was cancelled")
	errTimedOut  = errors.New("the task ran out of time")
)

// New returns a local executor.
func New(cfg Config) *Local {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	cfg.StorageRetry = cmp.Or(cfg.StorageRetry, agent.DefaultStorageRetry)
	cfg.MaxRunning = cmp.Or(cfg.MaxRunning, DefaultMaxRunning)
	cfg.TaskTimeout = cmp.Or(cfg.TaskTimeout, DefaultTaskTimeout)
	cfg.Heartbeat = cmp.Or(cfg.Heartbeat, DefaultHeartbeat)
	cfg.OutputBudget = cmp.Or(cfg.OutputBudget, DefaultOutputBudget)
	cfg.AdoptEvery = cmp.Or(cfg.AdoptEvery, DefaultAdoptEvery)
	if cfg.Sandboxes == nil && cfg.SandboxError == nil {
		cfg.SandboxError = skilld.Errorf(skilld.EUNAVAILABLE, "tasks cannot run: this executor has no sandbox provider")
	}
	return &Local{
		cfg:     cfg,
		running: map[string]*running{},
		watch:   map[string][]chan struct{}{},
		pool:    pool{sched: sched.New[*waiting](cfg.MaxRunning)},
		stop:    make(chan struct{}),
	}
}

var (
	_ service.Executor = (*Local)(nil)
	_ service.Ready    = (*Local)(nil)
	_ service.Queue    = (*Local)(nil)
)

// ErrDraining is wrapped in the EUNAVAILABLE error of Ready while Drain
// runs: the server is stopping.
var ErrDraining = errors.New("the executor is draining")

// Ready reports why tasks cannot run here: no sandbox, or the executor
// is draining (the server is shutting down), so that a task started now
// is refused with a 503 its client can retry elsewhere or later, rather
// than recorded to wait for the next start. Nil when they can.
func (l *Local) Ready() error {
	if l.cfg.SandboxError != nil {
		return l.cfg.SandboxError
	}
	l.mu.Lock()
	draining := l.pool.closed
	l.mu.Unlock()
	if draining {
		return skilld.Errorf(skilld.EUNAVAILABLE, "this server is shutting down and starts no new tasks; "+
			"retry in a few seconds, on another server or on this one once it is back: %w", ErrDraining)
	}
	return nil
}

// Start runs a queued task in the background: now, when the pool has
// room for it (the task is running when Start returns), otherwise when
// its turn comes (see Position). A task recorded while Drain began is
// queued, not refused: its record exists, and the next start runs it.
func (l *Local) Start(ctx context.Context, t *skilld.Task) error {
	if err := l.cfg.SandboxError; err != nil {
		return err
	}
	own := *t // the caller keeps its copy
	maxRunning, err := l.maxRunning(ctx, own.WorkspaceID)
	if err != nil {
		return err
	}
	l.mu.Lock()
	now := !l.pool.closed && l.pool.sched.TryStart(own.WorkspaceID, maxRunning)
	if now {
		l.tasks.Add(1)
	}
	l.mu.Unlock()
	if !now {
		return l.enqueue(ctx, &own, false)
	}
	p := &place{ws: own.WorkspaceID, held: true}
	if err := l.begin(ctx, &own); err != nil {
		l.leave(p)
		l.tasks.Done()
		return err
	}
	l.wg.Go(func() {
		defer l.tasks.Done()
		defer l.leave(p)
		l.execute(ctx, &own, true, p)
	})
	return nil
}

// RunOptions adjust a task run in the foreground.
type RunOptions struct {
	// Approver decides calls that need approval; by default the task
	// waits for a decision through the API.
	Approver agent.Approver
	// Model, when set, replaces the model the snapshot names.
	Model     model.Model
	ModelName string
	// Window, when set, replaces the snapshot's context window.
	Window int
	// KeepSandbox keeps this task's sandbox when it ends.
	KeepSandbox bool
	// OnSandbox sees the task's sandbox once it exists.
	OnSandbox func(sandbox.Sandbox)
	// OnEvent sees every event as it happens.
	OnEvent func(agent.Event)
	// Gate, when set, is the run's agent.Config.Gate: another scheduler
	// (a Temporal worker) deciding when each step runs.
	Gate func(ctx context.Context, s agent.Step) error
}

// Run runs a queued task in the foreground (as `skilld run` does), outside
// the pool, and returns its final status. Cancelling ctx cancels the task.
func (l *Local) Run(ctx context.Context, t *skilld.Task, opts RunOptions) (*skilld.Task, error) {
	if err := l.Ready(); err != nil {
		return nil, err
	}
	if err := l.begin(ctx, t); err != nil {
		return nil, err
	}
	runCtx, cancel := l.register(ctx, t)
	defer cancel(nil)
	l.run(runCtx, t, opts)
	return l.cfg.DB.TaskGet(context.WithoutCancel(ctx), &store.TaskGetParams{ID: t.ID})
}

// Begin moves a queued task to running, for a scheduler outside this
// executor (a Temporal workflow) that then runs it with Resume.
func (l *Local) Begin(ctx context.Context, t *skilld.Task) error { return l.begin(ctx, t) }

// Resume runs a started task (running or waiting for approval) from its
// log to its end, or until ctx is cancelled with agent.ErrSuspended, in
// the foreground and outside the pool: the building block of executors
// that schedule runs elsewhere. Cancel reaches it.
func (l *Local) Resume(ctx context.Context, t *skilld.Task, opts RunOptions) {
	runCtx, cancel := l.register(ctx, t)
	defer cancel(nil)
	l.run(runCtx, t, opts)
}

// Abandon ends a task no run of which can end it (its workflow was
// cancelled or failed for good): the log gets a task.failed event saying
// why, the status is recorded with code (by default cancelled for a
// cancelled task, unavailable otherwise), and the sandbox goes. A task
// that already ended is left as it is.
func (l *Local) Abandon(ctx context.Context, taskID string, status skilld.TaskStatus, code, msg string) error {
	t, err := l.cfg.DB.TaskGet(ctx, &store.TaskGetParams{ID: taskID})
	if err != nil || t.Status.Done() {
		return err
	}
	if code == "" {
		code = skilld.EUNAVAILABLE
		if status == skilld.TaskCancelled {
			code = skilld.TaskCancelledCode
		}
	}
	l.logFailure(ctx, taskID, skilld.Errorf(code, "%s", msg))
	// The sandbox goes before the status says the task ended, so whoever
	// sees it ended (a client, a test cleaning up its folders) finds
	// nothing of it left; a crash in between leaves a task that is
	// abandoned again.
	if l.cfg.Sandboxes != nil && !l.cfg.KeepSandboxes {
		if sb, err := l.cfg.Sandboxes.Create(ctx, sandbox.CreateParams{ID: taskID, Reopen: true}); err == nil {
			sb.Destroy(ctx)
		}
	}
	l.finish(ctx, taskID, outcome{status: status, code: code, msg: msg})
	return nil
}

// Cancel stops a task running here, or takes a queued one out of the
// queue (the service then records it as cancelled).
func (l *Local) Cancel(_ context.Context, taskID string) (bool, error) {
	l.mu.Lock()
	r := l.running[taskID]
	l.mu.Unlock()
	if r == nil {
		l.dequeue(taskID)
		return false, nil
	}
	r.cancel(errCancelled)
	return true, nil
}

// Decide answers a call waiting for approval.
func (l *Local) Decide(_ context.Context, taskID, callID string, approved bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.running[taskID]
	if r == nil || r.pending[callID] == nil {
		return skilld.Errorf(skilld.ENOTFOUND, "no tool call %q of task %s is waiting for approval", callID, taskID)
	}
	r.pending[callID] <- approved
	delete(r.pending, callID)
	return nil
}

// Watch returns a channel that receives (without blocking the run) after
// each entry the task appends, and a function to stop watching.
func (l *Local) Watch(taskID string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	l.mu.Lock()
	l.watch[taskID] = append(l.watch[taskID], ch)
	l.mu.Unlock()
	return ch, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		list := l.watch[taskID]
		for i, c := range list {
			if c == ch {
				l.watch[taskID] = append(list[:i], list[i+1:]...)
				break
			}
		}
		if len(l.watch[taskID]) == 0 {
			delete(l.watch, taskID)
		}
	}
}

func (l *Local) notify(taskID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ch := range l.watch[taskID] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}
