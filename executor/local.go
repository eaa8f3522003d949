// Package executor runs tasks. Local runs them in this process: each task
// is a goroutine running the agent runtime on the task's snapshot, writing
// every message and event to the store's task log, with the task's status
// kept in its row (queued → running ⇄ waiting_for_approval → completed,
// failed or cancelled).
package executor

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/blob"
	"github.com/skilld/skilld/internal/outage"
	"github.com/skilld/skilld/policy"
	"github.com/skilld/skilld/sandbox"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store"
)

// Config is what the local executor needs.
type Config struct {
	Service *service.Service
	DB      store.Store
	Blobs   blob.Store
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
	// StorageRetry is how long a task waits out unreachable storage (its
	// log, its packages, recording its end) before it fails; 0 means
	// agent.DefaultStorageRetry.
	StorageRetry time.Duration
	Logger       *slog.Logger
}

// Local runs tasks in this process.
type Local struct {
	cfg Config

	mu      sync.Mutex
	running map[string]*running
	watch   map[string][]chan struct{}
	wg      sync.WaitGroup
}

type running struct {
	cancel  context.CancelFunc
	pending map[string]chan bool // call id → decision
}

// New returns a local executor.
func New(cfg Config) *Local {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	cfg.StorageRetry = cmp.Or(cfg.StorageRetry, agent.DefaultStorageRetry)
	if cfg.Sandboxes == nil && cfg.SandboxError == nil {
		cfg.SandboxError = skilld.Errorf(skilld.EUNAVAILABLE, "tasks cannot run: this executor has no sandbox provider")
	}
	return &Local{
		cfg:     cfg,
		running: map[string]*running{},
		watch:   map[string][]chan struct{}{},
	}
}

var _ service.Executor = (*Local)(nil)
var _ service.Ready = (*Local)(nil)

// Ready reports why tasks cannot run here (no sandbox), or nil.
func (l *Local) Ready() error { return l.cfg.SandboxError }

// Recover marks tasks that were running when the process stopped as
// failed, so none stays "running" forever. (Resuming them from their log
// is the Temporal executor's job.)
func (l *Local) Recover(ctx context.Context) error {
	for off := 0; ; off += store.MaxPageSize {
		ws, err := l.cfg.DB.WorkspaceList(ctx, &store.WorkspaceListParams{Page: store.Page{Limit: store.MaxPageSize, Offset: off}})
		if err != nil {
			return err
		}
		for _, w := range ws {
			for _, st := range []skilld.TaskStatus{skilld.TaskRunning, skilld.TaskWaitingForApproval} {
				ids, err := l.taskIDs(ctx, w.ID, st)
				if err != nil {
					return err
				}
				for _, id := range ids {
					l.finish(ctx, id, skilld.TaskFailed, "the server stopped while the task ran")
				}
			}
		}
		if len(ws) < store.MaxPageSize {
			return nil
		}
	}
}

// taskIDs lists every task of a workspace in a status. All pages are read
// before any task changes status, which would shift the pages.
func (l *Local) taskIDs(ctx context.Context, workspaceID string, st skilld.TaskStatus) ([]string, error) {
	var ids []string
	for off := 0; ; off += store.MaxPageSize {
		tasks, _, err := l.cfg.DB.TaskList(ctx, &store.TaskListParams{WorkspaceID: workspaceID, Status: st, Page: store.Page{Limit: store.MaxPageSize, Offset: off}})
		if err != nil {
			return nil, err
		}
		for _, t := range tasks {
			ids = append(ids, t.ID)
		}
		if len(tasks) < store.MaxPageSize {
			return ids, nil
		}
	}
}

// Start runs a queued task in the background.
func (l *Local) Start(ctx context.Context, t *skilld.Task) error {
	if err := l.Ready(); err != nil {
		return err
	}
	runCtx, cancel, err := l.begin(ctx, context.WithoutCancel(ctx), t.ID)
	if err != nil {
		return err
	}
	l.wg.Go(func() {
		defer cancel()
		l.run(runCtx, t, RunOptions{})
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
}

// Run runs a queued task in the foreground (as `skilld run` does) and
// returns its final status. Cancelling ctx cancels the task.
func (l *Local) Run(ctx context.Context, t *skilld.Task, opts RunOptions) (*skilld.Task, error) {
	if err := l.Ready(); err != nil {
		return nil, err
	}
	runCtx, cancel, err := l.begin(ctx, ctx, t.ID)
	if err != nil {
		return nil, err
	}
	defer cancel()
	l.run(runCtx, t, opts)
	return l.cfg.DB.TaskGet(context.WithoutCancel(ctx), &store.TaskGetParams{ID: t.ID})
}

// begin moves a queued task to running and registers it, so that Cancel
// and Decide reach it. The run's context derives from parent: a background
// run must outlive the request that started it, a foreground one must not.
func (l *Local) begin(ctx, parent context.Context, taskID string) (context.Context, context.CancelFunc, error) {
	now := time.Now().UTC()
	if _, err := l.cfg.DB.TaskUpdate(ctx, &store.TaskUpdateParams{ID: taskID, ExpectedStatus: skilld.TaskQueued, Status: skilld.TaskRunning, StartedAt: &now}); err != nil {
		return nil, nil, err
	}
	runCtx, cancel := context.WithCancel(parent)
	l.mu.Lock()
	l.running[taskID] = &running{cancel: cancel, pending: map[string]chan bool{}}
	l.mu.Unlock()
	return runCtx, cancel, nil
}

// Wait blocks until every started task has finished.
func (l *Local) Wait() { l.wg.Wait() }

// Shutdown cancels every running task and waits for them.
func (l *Local) Shutdown() {
	l.mu.Lock()
	for _, r := range l.running {
		r.cancel()
	}
	l.mu.Unlock()
	l.wg.Wait()
}

// Cancel stops a task running here.
func (l *Local) Cancel(_ context.Context, taskID string) (bool, error) {
	l.mu.Lock()
	r := l.running[taskID]
	l.mu.Unlock()
	if r == nil {
		return false, nil
	}
	r.cancel()
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

// run executes one task to its end.
func (l *Local) run(ctx context.Context, t *skilld.Task, opts RunOptions) {
	status, msg := skilld.TaskFailed, ""
	defer func() {
		if p := recover(); p != nil {
			status, msg = skilld.TaskFailed, fmt.Sprintf("internal error: %v", p)
			l.cfg.Logger.Error("task panicked", "task", t.ID, "panic", p)
		}
		if ctx.Err() != nil && status != skilld.TaskCompleted {
			status, msg = skilld.TaskCancelled, "cancelled"
		}
		l.finish(context.WithoutCancel(ctx), t.ID, status, msg)
		l.mu.Lock()
		delete(l.running, t.ID)
		l.mu.Unlock()
		l.notify(t.ID)
	}()
	a, sb, err := l.agentFor(ctx, t, opts)
	if sb != nil {
		defer l.release(t.ID, sb, opts.KeepSandbox)
		if opts.OnSandbox != nil {
			opts.OnSandbox(sb)
		}
	}
	if err != nil {
		msg = skilld.ErrorMessage(err)
		if skilld.ErrorCode(err) == skilld.EINTERNAL {
			msg = err.Error()
		}
		l.logFailure(ctx, t.ID, err)
		return
	}
	for ev, err := range a.Run(ctx, agent.Task{ID: t.ID, Input: t.Input}) {
		if err != nil {
			msg = "task log: " + err.Error()
			return
		}
		l.notify(t.ID)
		if opts.OnEvent != nil {
			opts.OnEvent(ev)
		}
		switch ev.Type {
		case agent.EventTaskCompleted:
			status = skilld.TaskCompleted
		case agent.EventTaskFailed:
			msg, _ = ev.Data["error"].(string)
		}
	}
}

// logFailure records why a task could not start, as the task.failed event
// the runtime would have written.
func (l *Local) logFailure(ctx context.Context, taskID string, err error) {
	payload, _ := json.Marshal(agent.Event{Type: agent.EventTaskFailed, TaskID: taskID,
		Data: map[string]any{"error": skilld.ErrorMessage(err), "code": skilld.ErrorCode(err), "detail": err.Error()}})
	err = l.waitOut(ctx, "the task log", func(ctx context.Context) error {
		_, err := l.cfg.DB.TaskLogAppend(ctx, &store.TaskLogAppendParams{TaskID: taskID, Kind: agent.KindEvent, Payload: payload})
		return err
	})
	if err != nil {
		l.cfg.Logger.Error("recording why a task failed", "task", taskID, "err", err, "cause", errors.Unwrap(err))
	}
}

// waitOut runs a write that must outlive a short storage outage, detached
// from the task's cancellation: the end of a task is recorded even when it
// was cancelled.
func (l *Local) waitOut(ctx context.Context, what string, fn func(context.Context) error) error {
	return outage.WaitOut(context.WithoutCancel(ctx), l.cfg.StorageRetry, what, fn)
}

func (l *Local) finish(ctx context.Context, taskID string, status skilld.TaskStatus, msg string) {
	now := time.Now().UTC()
	if err := l.waitOut(ctx, "the task store", func(ctx context.Context) error {
		_, err := l.cfg.DB.TaskUpdate(ctx, &store.TaskUpdateParams{ID: taskID, Status: status, Error: &msg, FinishedAt: &now})
		return err
	}); err != nil {
		l.cfg.Logger.Error("recording the end of a task", "task", taskID, "err", err, "cause", errors.Unwrap(err))
		return
	}
	if err := l.waitOut(ctx, "the task store", func(ctx context.Context) error { return l.cfg.Service.ReleaseTask(ctx, taskID) }); err != nil {
		l.cfg.Logger.Error("releasing the packages of a task", "task", taskID, "err", err, "cause", errors.Unwrap(err))
	}
}

// release removes a task's sandbox unless it is to be kept.
func (l *Local) release(taskID string, sb sandbox.Sandbox, keep bool) {
	if keep || l.cfg.KeepSandboxes {
		return
	}
	if err := sb.Destroy(context.Background()); err != nil {
		l.cfg.Logger.Error("removing a task's sandbox", "task", taskID, "err", err)
	}
}

// agentFor builds the runtime for a task from its snapshot, with its
// sandbox (returned for the caller to release, also when the agent could
// not be built).
func (l *Local) agentFor(ctx context.Context, t *skilld.Task, opts RunOptions) (*agent.Agent, sandbox.Sandbox, error) {
	snap, err := service.TaskSnapshot(t)
	if err != nil {
		return nil, nil, err
	}
	if snap.Sandbox.Network && !l.cfg.AllowNetwork {
		return nil, nil, skilld.Errorf(skilld.EFORBIDDEN, "agent %q asks for network access in its sandbox (config.sandbox.network), which this server does not allow; start it with --sandbox-network to allow it", snap.AgentName)
	}
	m, name := opts.Model, opts.ModelName
	if m == nil {
		if snap.Model == "" {
			return nil, nil, skilld.Errorf(skilld.EINVALID, "agent %q has no model; set config.model (for example openai:gpt-4o-mini)", snap.AgentName)
		}
		if m, name, err = l.cfg.OpenModel(snap.Model); err != nil {
			return nil, nil, err
		}
	}
	counter, err := l.cfg.Tokenizer(snap.Model)
	if err != nil {
		return nil, nil, err
	}
	window := cmp.Or(opts.Window, snap.Context.Window)
	if window == 0 {
		w, ok := l.cfg.Window(snap.Model)
		if !ok {
			return nil, nil, skilld.Errorf(skilld.EINVALID, "the context window of %q is not known; set config.context.window on agent %q", snap.Model, snap.AgentName)
		}
		window = w
	}
	env := make([]string, 0, len(snap.Sandbox.Env))
	for k, v := range snap.Sandbox.Env {
		env = append(env, k+"="+v)
	}
	slices.Sort(env)
	sb, err := l.cfg.Sandboxes.Create(ctx, sandbox.CreateParams{ID: t.ID, Network: snap.Sandbox.Network, Env: env})
	if err != nil {
		return nil, nil, fmt.Errorf("creating the sandbox: %w", err)
	}
	info := l.cfg.Sandboxes.Info()
	skills := make([]agent.Skill, len(snap.Skills))
	for i, s := range snap.Skills {
		skills[i] = agent.Skill{ID: s.ID, Name: s.Name, Description: s.Description, Digest: s.Digest, Files: s.Files, Withheld: s.Withheld}
	}
	var approve agent.Approver = approver{l}
	if opts.Approver != nil {
		approve = opts.Approver
	}
	a, err := agent.New(agent.Config{
		Model: m, ModelName: name, Instruction: snap.Instruction, Window: window,
		Skills: skills, Packages: l.cfg.Service.Packages(),
		Placement: snap.Context.Placement, EntryShare: snap.Context.EntryShare, SkillsShare: snap.Context.SkillsShare,
		MaxLoaded: snap.Context.MaxLoaded, MaxMessages: snap.Context.MaxMessages, NoCompaction: snap.Context.Compaction != nil && !*snap.Context.Compaction,
		Policy: policy.Merge(snap.Tools...), Approver: approve, Sandbox: sb, SandboxInfo: &info,
		Tokenizer: counter, Outputs: taskOutputs{blobs: l.cfg.Blobs, db: l.cfg.DB, taskID: t.ID}, Log: taskLog{db: l.cfg.DB, taskID: t.ID},
		StorageRetry: l.cfg.StorageRetry,
	})
	return a, sb, err
}

// taskLog is the store's task log as the runtime's Log.
type taskLog struct {
	db     store.Store
	taskID string
}

func (g taskLog) Append(ctx context.Context, kind string, payload json.RawMessage) (int64, time.Time, error) {
	e, err := g.db.TaskLogAppend(ctx, &store.TaskLogAppendParams{TaskID: g.taskID, Kind: kind, Payload: payload})
	if err != nil {
		return 0, time.Time{}, err
	}
	return e.Seq, e.CreatedAt, nil
}

// taskOutputs keeps a task's large tool outputs in the blob store and
// records each as the task's, so that read_tool_output of one task opens
// only its own outputs (a digest alone opens nothing), and so that the
// blobs count as referenced while the task exists.
type taskOutputs struct {
	blobs  blob.Store
	db     store.Store
	taskID string
}

func (o taskOutputs) Put(ctx context.Context, text string) (string, error) {
	id, err := agent.BlobOutputs{Blobs: o.blobs}.Put(ctx, text)
	if err != nil {
		return "", err
	}
	return id, o.db.TaskOutputAdd(ctx, &store.TaskOutputParams{TaskID: o.taskID, Digest: id})
}

func (o taskOutputs) Get(ctx context.Context, id string) (string, error) {
	ok, err := o.db.TaskOutputExists(ctx, &store.TaskOutputParams{TaskID: o.taskID, Digest: id})
	if err != nil {
		return "", err
	}
	if !ok {
		return "", skilld.Errorf(skilld.ENOTFOUND, "no stored output %q in this task", id)
	}
	return agent.BlobOutputs{Blobs: o.blobs}.Get(ctx, id)
}

// approver pauses a task until someone decides through the API.
type approver struct{ l *Local }

func (a approver) Approve(ctx context.Context, req agent.ApprovalRequest) (bool, error) {
	ch := make(chan bool, 1)
	a.l.mu.Lock()
	r := a.l.running[req.TaskID]
	if r != nil {
		r.pending[req.CallID] = ch
	}
	a.l.mu.Unlock()
	if r == nil {
		return false, errors.New("the task is not running here")
	}
	db := a.l.cfg.DB
	if _, err := db.TaskUpdate(ctx, &store.TaskUpdateParams{ID: req.TaskID, Status: skilld.TaskWaitingForApproval}); err != nil {
		return false, err
	}
	a.l.notify(req.TaskID)
	defer db.TaskUpdate(context.WithoutCancel(ctx), &store.TaskUpdateParams{ID: req.TaskID, Status: skilld.TaskRunning})
	select {
	case ok := <-ch:
		return ok, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}
