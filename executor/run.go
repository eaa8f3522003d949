package executor

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/internal/outage"
	"github.com/skilld/skilld/policy"
	"github.com/skilld/skilld/sandbox"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store"
)

// execute runs a task that got a place in the pool: a queued one from its
// start, a resumed one from its log.
// parent is what the task was started under: its values (the API
// request's trace) carry on, its cancellation does not.
func (l *Local) execute(parent context.Context, t *skilld.Task, resume bool, held *place) {
	ctx := context.WithoutCancel(parent)
	if !resume {
		if err := l.begin(ctx, t); err != nil {
			if skilld.ErrorCode(err) != skilld.ECONFLICT { // ECONFLICT: cancelled while it waited
				l.cfg.Logger.Error("starting a task", "task", t.ID, "err", err)
			}
			return
		}
	}
	runCtx, cancel := l.register(ctx, t)
	defer cancel(nil)
	l.mu.Lock()
	l.running[t.ID].held = held
	l.mu.Unlock()
	l.run(runCtx, t, RunOptions{})
}

// begin moves a queued task to running.
func (l *Local) begin(ctx context.Context, t *skilld.Task) error {
	now := time.Now().UTC()
	got, err := l.cfg.DB.TaskUpdate(ctx, &store.TaskUpdateParams{ID: t.ID, ExpectedStatus: skilld.TaskQueued, Status: skilld.TaskRunning, StartedAt: &now})
	if err != nil {
		return err
	}
	*t = *got
	return nil
}

// register makes the run's context — cancelled by Cancel (errCancelled),
// by Drain (agent.ErrSuspended) or by its deadline (errTimedOut), counted
// from the task's start so that a restart does not extend it — and
// registers the run so that Cancel and Decide reach it. The returned
// function ends both.
func (l *Local) register(parent context.Context, t *skilld.Task) (context.Context, context.CancelCauseFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	ctx, stop := context.WithDeadlineCause(ctx, l.Deadline(t), errTimedOut)
	l.mu.Lock()
	l.running[t.ID] = &running{cancel: cancel, pending: map[string]chan bool{}}
	l.mu.Unlock()
	return ctx, func(cause error) {
		stop()
		cancel(cause)
		l.mu.Lock()
		delete(l.running, t.ID)
		l.mu.Unlock()
	}
}

// Deadline is when a started task runs out of time.
func (l *Local) Deadline(t *skilld.Task) time.Time {
	start := time.Now()
	if t.StartedAt != nil {
		start = *t.StartedAt
	}
	return start.Add(l.timeout(t))
}

// timeout is how long the task may run: its agent's, but never longer
// than the executor's, which is the operator's bound on what any member's
// agent may claim.
func (l *Local) timeout(t *skilld.Task) time.Duration {
	if snap, err := service.TaskSnapshot(t); err == nil && snap.Timeout != "" {
		if d, err := time.ParseDuration(snap.Timeout); err == nil && d > 0 {
			return min(d, l.cfg.TaskTimeout)
		}
	}
	return l.cfg.TaskTimeout
}

// TaskTimeout is the longest a task may run here, whatever its agent
// says (service.TimeoutLimiter).
func (l *Local) TaskTimeout() time.Duration { return l.cfg.TaskTimeout }

var _ service.TimeoutLimiter = (*Local)(nil)

// run executes one task to its end, or until it is suspended.
func (l *Local) run(ctx context.Context, t *skilld.Task, opts RunOptions) {
	// end is how the run ended; it is recorded in the task's row. It
	// fails unless the run says otherwise.
	end := outcome{status: skilld.TaskFailed}
	var sb sandbox.Sandbox
	var budget *outputBudget
	fenced := false // another run owns the task now
	obs := l.observeRun(ctx, t)
	// Deferred first, so it runs last: after the status is decided below.
	defer func() {
		switch {
		case fenced:
			obs.Ended("fenced")
		case agent.Suspended(ctx):
			obs.Ended("suspended")
		default:
			obs.Ended(string(end.status))
		}
	}()
	stopBeat := l.heartbeat(ctx, t.ID)
	defer func() {
		stopBeat()
		if p := recover(); p != nil {
			end = failure(skilld.Errorf(skilld.EINTERNAL, "internal error"))
			l.cfg.Logger.Error("task panicked", "task", t.ID, "panic", p)
		}
		if fenced {
			l.cfg.Logger.Warn("a task's log was taken over by another run; this one stops", "task", t.ID)
			return
		}
		if agent.Suspended(ctx) {
			// Stopped to be resumed: the status, the log and the sandbox
			// stay as they are.
			l.notify(t.ID)
			return
		}
		switch cause := context.Cause(ctx); {
		case end.status == skilld.TaskCompleted:
		case errors.Is(cause, errOutputBudget):
			end = failure(skilld.Errorf(skilld.ETOOLARGE, "%s", budget.spent()))
		case errors.Is(cause, errTimedOut):
			// Like a run over its model calls, a run over its time went
			// past a limit of the run: too_large.
			end = failure(skilld.Errorf(skilld.ETOOLARGE, "the task ran out of time: it may run for %s from its start (the agent's config.timeout, or the server's --task-timeout)", l.timeout(t)))
		case ctx.Err() != nil:
			end = outcome{status: skilld.TaskCancelled, code: skilld.TaskCancelledCode, msg: "cancelled"}
		}
		l.finish(context.WithoutCancel(ctx), t.ID, end)
		if sb != nil {
			l.release(t.ID, sb, opts.KeepSandbox)
		}
		l.notify(t.ID)
	}()
	past, err := l.pastLog(ctx, t)
	if err != nil {
		end = failure(err)
		return
	}
	if last, ok := ended(past); ok {
		end = last // it ended before its end was recorded
		return
	}
	next := int64(1) // the seq the run's first append gets
	if len(past) > 0 {
		next = past[len(past)-1].Seq + 1
	}
	l.mu.Lock()
	reg := l.running[t.ID]
	l.mu.Unlock()
	budget = l.newOutputBudget(t, past, func(cause error) {
		if reg != nil {
			reg.cancel(cause)
		}
	})
	a, s, err := l.agentFor(ctx, t, opts, next, obs, budget)
	sb = s
	if sb != nil && opts.OnSandbox != nil {
		opts.OnSandbox(sb)
	}
	if err != nil {
		end = failure(err)
		l.logFailure(ctx, t.ID, err)
		return
	}
	for ev, err := range a.Run(ctx, agent.Task{ID: t.ID, Input: t.Input, Resume: past}) {
		if err != nil {
			fenced = errors.Is(err, store.ErrLogMoved)
			end = failure(err)
			end.msg = "task log: " + end.msg
			if !fenced {
				l.logFailed(ctx, t.ID, fmt.Errorf("task log: %w", err))
			}
			return
		}
		if f, ok := ev.Payload.(agent.TaskFailed); ok && f.Cause != nil {
			l.logFailed(ctx, t.ID, f.Cause)
		}
		l.notify(t.ID)
		obs.Event(ev)
		if opts.OnEvent != nil {
			opts.OnEvent(ev)
		}
		if o, ok := outcomeOf(ev); ok {
			end = o
		}
	}
}

// outcome is how a run ended: what the task's row records of it.
type outcome struct {
	status skilld.TaskStatus
	output string // a completed task's answer
	code   string // why it did not complete: an error code, or skilld.TaskCancelledCode
	msg    string
	at     time.Time // when, if the log says; zero for now
}

// failure is the outcome of a run that failed with err.
func failure(err error) outcome {
	return outcome{status: skilld.TaskFailed, code: skilld.ErrorCode(err), msg: skilld.ErrorMessage(err)}
}

// outcomeOf reads the end of a run from its task.completed or task.failed
// event, as logged.
func outcomeOf(ev agent.Event) (outcome, bool) {
	switch p := ev.Payload.(type) {
	case agent.TaskCompleted:
		return outcome{status: skilld.TaskCompleted, output: p.Output, at: ev.Time}, true
	case agent.TaskFailed:
		return outcome{status: skilld.TaskFailed, code: cmp.Or(p.Code, skilld.EINTERNAL), msg: p.Error, at: ev.Time}, true
	}
	return outcome{}, false
}

// pastLog reads what a task started before wrote to its log (nothing for
// a task starting now).
func (l *Local) pastLog(ctx context.Context, t *skilld.Task) ([]agent.LogEntry, error) {
	var out []agent.LogEntry
	for after := int64(0); ; {
		var page []*skilld.TaskLogEntry
		err := l.waitOut(ctx, "the task log", func(ctx context.Context) (err error) {
			page, err = l.cfg.DB.TaskLogList(ctx, &store.TaskLogListParams{TaskID: t.ID, AfterSeq: after, Limit: logPage})
			return err
		})
		if err != nil {
			return nil, err
		}
		for _, e := range page {
			out = append(out, agent.LogEntry{Seq: e.Seq, Kind: e.Kind, Payload: e.Payload, Time: e.CreatedAt})
		}
		if len(page) < logPage {
			return out, nil
		}
		after = page[len(page)-1].Seq
	}
}

// logPage is how many log entries a resume reads at once.
const logPage = 1000

// ended reports whether a log already holds the task's end, and which.
func ended(log []agent.LogEntry) (outcome, bool) {
	if len(log) == 0 || log[len(log)-1].Kind != agent.KindEvent {
		return outcome{}, false
	}
	last := log[len(log)-1]
	ev, err := agent.EventOf("", last.Seq, last.Time, last.Kind, last.Payload)
	if err != nil {
		return outcome{}, false
	}
	return outcomeOf(ev)
}

// logFailure records why a task could not start, as the task.failed event
// the runtime would have written.
func (l *Local) logFailure(ctx context.Context, taskID string, err error) {
	l.logFailed(ctx, taskID, err)
	payload, _ := json.Marshal(agent.Event{Type: agent.EventTaskFailed, TaskID: taskID, Payload: agent.NewTaskFailed(err)})
	err = l.waitOut(ctx, "the task log", func(ctx context.Context) error {
		_, err := l.cfg.DB.TaskLogAppend(ctx, &store.TaskLogAppendParams{TaskID: taskID, Kind: agent.KindEvent, Payload: payload})
		return err
	})
	if err != nil {
		l.cfg.Logger.Error("recording why a task failed", "task", taskID, "err", err, "cause", errors.Unwrap(err))
	}
}

// logFailed logs why a task failed, in full. The task's row and its
// task.failed event keep only the error's public message and code: an
// internal error's text (paths, addresses, a provider's answer) is the
// operator's to read, not the API client's.
func (l *Local) logFailed(ctx context.Context, taskID string, err error) {
	level := slog.LevelInfo
	if skilld.ErrorCode(err) == skilld.EINTERNAL {
		level = slog.LevelError
	}
	l.cfg.Logger.Log(ctx, level, "task failed", "task", taskID, "code", skilld.ErrorCode(err), "err", err)
}

// waitOut runs a write that must outlive a short storage outage, detached
// from the task's cancellation: the end of a task is recorded even when it
// was cancelled.
func (l *Local) waitOut(ctx context.Context, what string, fn func(context.Context) error) error {
	return outage.WaitOut(context.WithoutCancel(ctx), l.cfg.StorageRetry, what, func(ctx context.Context) error {
		err := fn(ctx)
		if err != nil {
			l.observer().StorageError(what, err)
		}
		return err
	})
}

// finish records a task's end and lets its packages go. The end is the
// one the log has when it has one: its time, its output, its error.
func (l *Local) finish(ctx context.Context, taskID string, end outcome) {
	at := end.at
	if at.IsZero() {
		at = time.Now()
	}
	at = at.UTC()
	if end.status == skilld.TaskCompleted {
		end.code, end.msg = "", ""
	} else {
		end.output, end.code = "", cmp.Or(end.code, skilld.EINTERNAL)
	}
	if err := l.untilDone(ctx, taskID, "recording the end of a task", func(ctx context.Context) error {
		_, err := l.cfg.DB.TaskUpdate(ctx, &store.TaskUpdateParams{ID: taskID, Status: end.status, Output: &end.output, Error: &end.msg, ErrorCode: &end.code, FinishedAt: &at})
		return err
	}); err != nil {
		return
	}
	l.untilDone(ctx, taskID, "releasing the packages of a task", func(ctx context.Context) error { return l.cfg.Service.ReleaseTask(ctx, taskID) })
}

// untilDone runs a write that ends a task until it goes through: through
// an outage of any length (waited out a StorageRetry at a time), so that a
// task is never left running with nothing running it. It gives up on an
// error that is not an outage, and when the executor stops (the task then
// stays as it is, and the next start resumes it from its log, which ends
// it again).
func (l *Local) untilDone(ctx context.Context, taskID, what string, fn func(context.Context) error) error {
	for attempt := 1; ; attempt++ {
		err := l.waitOut(ctx, "the task store", fn)
		if err == nil {
			if attempt > 1 {
				l.cfg.Logger.Info(what+": done once the store answered", "task", taskID, "attempts", attempt)
			}
			return nil
		}
		if skilld.ErrorCode(err) != skilld.EUNAVAILABLE {
			l.cfg.Logger.Error(what, "task", taskID, "err", err, "cause", errors.Unwrap(err))
			return err
		}
		if attempt == 1 {
			l.cfg.Logger.Warn(what+": the store does not answer; retrying until it does", "task", taskID, "err", err)
		}
		select {
		case <-l.stop:
			l.cfg.Logger.Warn(what+": stopping before the store answered; the next start ends the task", "task", taskID)
			return err
		case <-time.After(outage.Cap):
		}
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

// agentFor builds the runtime for a task from its snapshot (its log goes
// on at sequence number next), with its sandbox (returned for the caller
// to release, also when the agent could not be built).
func (l *Local) agentFor(ctx context.Context, t *skilld.Task, opts RunOptions, next int64, obs RunObserver, budget *outputBudget) (*agent.Agent, sandbox.Sandbox, error) {
	snap, err := service.TaskSnapshot(t)
	if err != nil {
		return nil, nil, err
	}
	if snap.Sandbox.Network.On() && !l.cfg.AllowNetwork {
		return nil, nil, skilld.Errorf(skilld.EFORBIDDEN, "agent %q asks for network access in its sandbox (config.sandbox.network), which this server does not allow; start it with --sandbox-network to allow it", snap.AgentName)
	}
	rm, err := l.openModel(snap.AgentName, snap.Model, snap.Context.Window, opts)
	if err != nil {
		return nil, nil, err
	}
	env := make([]string, 0, len(snap.Sandbox.Env))
	for k, v := range snap.Sandbox.Env {
		env = append(env, k+"="+v)
	}
	slices.Sort(env)
	disk, err := service.SandboxDisk(snap.Sandbox)
	if err != nil {
		return nil, nil, err
	}
	// A resumed task goes on in its own sandbox, with its files.
	sb, err := l.cfg.Sandboxes.Create(ctx, sandbox.CreateParams{ID: t.ID, Network: snap.Sandbox.Network.On(), Allow: snap.Sandbox.Network.Allow, Env: env, Disk: disk, Rootfs: snap.Sandbox.Rootfs, Reopen: true})
	if err != nil {
		return nil, nil, fmt.Errorf("creating the sandbox: %w", err)
	}
	info := l.cfg.Sandboxes.Info()
	if d, ok := sb.(sandbox.Described); ok {
		info = d.Info()
	}
	cfg, err := l.runConfig(ctx, t, snap, rm)
	if err != nil {
		return nil, sb, err
	}
	cfg.Approver = approver{l}
	if opts.Approver != nil {
		cfg.Approver = opts.Approver
	}
	cfg.Sandbox, cfg.SandboxInfo = observedSandbox{Sandbox: sb, obs: obs}, &info
	cfg.Outputs = taskOutputs{blobs: l.cfg.Blobs, db: l.cfg.DB, taskID: t.ID, budget: budget}
	cfg.Log = &taskLog{db: l.cfg.DB, taskID: t.ID, budget: budget, next: next}
	cfg.Gate = opts.Gate
	cfg.Secrets = func(ctx context.Context, names []string) (map[string]string, error) {
		return l.secretValues(ctx, t.WorkspaceID, names)
	}
	switch {
	case !l.cfg.AllowNetwork:
		cfg.NoSkillNetwork = "this server lets no task reach the network (start it with --sandbox-network)"
	case info.NoProxy != "":
		cfg.NoSkillNetwork = info.NoProxy
	}
	a, err := agent.New(cfg)
	return a, sb, err
}

// runConfig is what a run of snap with model rm is configured with, short
// of what only a task has (its sandbox, log, outputs, approver): an eval's
// decision is configured with the same.
func (l *Local) runConfig(ctx context.Context, t *skilld.Task, snap *service.Snapshot, rm runModel) (agent.Config, error) {
	tools, err := l.toolsets(ctx, t, snap)
	if err != nil {
		return agent.Config{}, err
	}
	return agent.Config{
		Model: rm.model, ModelName: rm.name, Instruction: snap.Instruction, Window: rm.window,
		Skills: runSkills(snap), Packages: l.cfg.Service.Packages(), SkillIndexes: &l.indexes,
		Placement: snap.Context.Placement, EntryShare: snap.Context.EntryShare, SkillsShare: snap.Context.SkillsShare,
		MaxLoaded: snap.Context.MaxLoaded, MaxMessages: snap.Context.MaxMessages, NoCompaction: snap.Context.Compaction != nil && !*snap.Context.Compaction,
		Policy: policy.Merge(snap.Tools...), Tokenizer: rm.counter, StorageRetry: l.cfg.StorageRetry, Tools: tools,
	}, nil
}

// secretValues opens the workspace's secrets of the given names for a
// run; a name not set is left out.
func (l *Local) secretValues(ctx context.Context, workspaceID string, names []string) (map[string]string, error) {
	out := make(map[string]string, len(names))
	for _, n := range names {
		v, err := l.cfg.Service.SecretValue(ctx, workspaceID, n)
		switch {
		case skilld.ErrorCode(err) == skilld.ENOTFOUND:
			continue
		case err != nil:
			return nil, fmt.Errorf("secret %s: %w", n, err)
		}
		out[n] = string(v)
	}
	return out, nil
}

// runSkills are a snapshot's skills as the runtime takes them.
func runSkills(snap *service.Snapshot) []agent.Skill {
	skills := make([]agent.Skill, len(snap.Skills))
	for i, s := range snap.Skills {
		skills[i] = agent.Skill{ID: s.ID, Name: s.Name, Description: s.Description, Digest: s.Digest, Files: s.Files, Headings: s.Headings, Rank: s.Rank, Withheld: s.Withheld,
			NoModelInvocation: s.NoModelInvocation, NoUserInvocation: s.NoUserInvocation}
		if g := s.Grants; g != nil {
			skills[i].Network, skills[i].Secrets = g.Network, g.Secrets
		}
	}
	return skills
}
