package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/tokenizer"
	"github.com/skilld/skilld/blob"
	"github.com/skilld/skilld/executor"
	skdtemporal "github.com/skilld/skilld/executor/temporal"
	"github.com/skilld/skilld/httpapi"
	"github.com/skilld/skilld/sandbox"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store"
)

// taskFlags are serve's flags for running tasks.
type taskFlags struct {
	executor        string
	temporal        temporalFlags
	maxRunning      int
	taskTimeout     time.Duration
	outputBudget    string
	outputBytes     int64 // outputBudget, parsed by check
	shutdownTimeout time.Duration
	// limits are serve's caps on each workspace's tasks
	// (--workspace-max-running, --workspace-max-queued).
	limits service.TaskLimits
	// storageQuota is serve's --workspace-storage-quota; quotaBytes is it
	// parsed by check.
	storageQuota string
	quotaBytes   int64
	envErr       error
	// observer is what the local executor reports to (set by serve).
	observer executor.Observer
}

// DefaultShutdownTimeout is how long a stopping server lets running tasks
// go on before it suspends them for the next start, and requests in
// flight go on before it cuts them off.
const DefaultShutdownTimeout = 30 * time.Second

func (f *taskFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&f.maxRunning, "max-running-tasks", executor.DefaultMaxRunning,
		"tasks run at once; the others wait, queued, each workspace's first come first served, the workspaces\ntaking turns (env SKILLD_MAX_RUNNING_TASKS)")
	fs.DurationVar(&f.taskTimeout, "task-timeout", executor.DefaultTaskTimeout,
		"how long a task may run from its start when its agent sets no config.timeout, and the most any task\nmay run whatever its agent's config.timeout (env SKILLD_TASK_TIMEOUT)")
	fs.StringVar(&f.outputBudget, "task-output-budget", cmp.Or(os.Getenv("SKILLD_TASK_OUTPUT_BUDGET"), "256MiB"),
		"the most bytes one task may keep: its log and its large tool outputs (kept as blobs); a task past it\nis stopped and fails too_large (env SKILLD_TASK_OUTPUT_BUDGET)")
	fs.DurationVar(&f.shutdownTimeout, "shutdown-timeout", DefaultShutdownTimeout,
		"on stop, how long running tasks may go on before they are suspended, to resume at the next start\n"+
			"(serve: and requests in flight may finish; event streams end at once) (env SKILLD_SHUTDOWN_TIMEOUT)")
	f.envErr = envFlags(fs, map[string]string{"max-running-tasks": "SKILLD_MAX_RUNNING_TASKS", "task-timeout": "SKILLD_TASK_TIMEOUT", "shutdown-timeout": "SKILLD_SHUTDOWN_TIMEOUT"})
}

func (f *taskFlags) check() error {
	switch {
	case f.envErr != nil:
		return f.envErr
	case f.executor != "local" && f.executor != "temporal":
		return fmt.Errorf("--executor must be local or temporal, not %q", f.executor)
	case f.maxRunning < 1:
		return fmt.Errorf("--max-running-tasks must be at least 1, not %d", f.maxRunning)
	case f.taskTimeout < time.Second || f.taskTimeout > service.MaxTaskTimeout:
		return fmt.Errorf("--task-timeout must be from 1s to %s, not %s", service.MaxTaskTimeout, f.taskTimeout)
	case !f.parseOutputBudget():
		return fmt.Errorf("--task-output-budget must be a size of at least 1MiB, such as 256MiB, not %q", f.outputBudget)
	case f.temporal.heartbeat < 0:
		return fmt.Errorf("--temporal-heartbeat must not be negative")
	case f.shutdownTimeout < 0:
		return fmt.Errorf("--shutdown-timeout must not be negative")
	case f.limits.MaxRunning < 0 || f.limits.MaxRunning > service.MaxTaskLimit:
		return fmt.Errorf("--workspace-max-running must be from 0 (no cap) to %d, not %d", service.MaxTaskLimit, f.limits.MaxRunning)
	case f.limits.MaxQueued < 0 || f.limits.MaxQueued > service.MaxTaskLimit:
		return fmt.Errorf("--workspace-max-queued must be from 0 (no cap) to %d, not %d", service.MaxTaskLimit, f.limits.MaxQueued)
	case !f.parseStorageQuota():
		return fmt.Errorf("--workspace-storage-quota must be a size such as 10GiB, or 0 for no quota, not %q", f.storageQuota)
	}
	return nil
}

// registerExecutor adds the choice of executor and the caps on each
// workspace's tasks, for serve.
func (f *taskFlags) registerExecutor(fs *flag.FlagSet) {
	fs.IntVar(&f.limits.MaxRunning, "workspace-max-running", 0,
		"tasks of one workspace that run at once, its others waiting while other workspaces' run; 0: no cap\n"+
			"but --max-running-tasks (an instance admin may set a workspace's own: PATCH /v1/workspaces/{ws});\n"+
			"the local executor only (env SKILLD_WORKSPACE_MAX_RUNNING)")
	fs.IntVar(&f.limits.MaxQueued, "workspace-max-queued", service.DefaultMaxQueuedTasks,
		"tasks of one workspace that may wait to start; more are refused with 429 rate_limited; 0: no cap\n"+
			"(an instance admin may set a workspace's own: PATCH /v1/workspaces/{ws}) (env SKILLD_WORKSPACE_MAX_QUEUED)")
	fs.StringVar(&f.storageQuota, "workspace-storage-quota", cmp.Or(os.Getenv("SKILLD_WORKSPACE_STORAGE_QUOTA"), fmt.Sprintf("%dGiB", service.DefaultStorageQuota>>30)),
		"the most bytes the tasks of one workspace may keep (their logs and large tool outputs); a workspace\n"+
			"at it starts no task (507 quota_exceeded) until tasks are deleted; 0: no quota (an instance admin\n"+
			"may set a workspace's own: PATCH /v1/workspaces/{ws}) (env SKILLD_WORKSPACE_STORAGE_QUOTA)")
	f.envErr = errors.Join(f.envErr, envFlags(fs, map[string]string{"workspace-max-running": "SKILLD_WORKSPACE_MAX_RUNNING", "workspace-max-queued": "SKILLD_WORKSPACE_MAX_QUEUED"}))
	fs.StringVar(&f.executor, "executor", cmp.Or(os.Getenv("SKILLD_EXECUTOR"), "local"),
		"where tasks run: local (in this process, durable across restarts) or temporal (on skilld worker\n"+
			"processes, through Temporal: see --temporal) (env SKILLD_EXECUTOR)")
	f.temporal.register(fs)
	f.envErr = errors.Join(f.envErr, f.temporal.registerHeartbeat(fs))
}

// taskRuntime is serve's executor, made by the service it runs tasks for
// (service.Config.Executor): prepare readies what it needs, service.New
// makes it, start picks up the tasks a restart left, drain lets running
// tasks finish (or suspends them) while the HTTP server stops, stop ends
// it.
type taskRuntime struct {
	// make is service.Config.Executor.
	make func(*service.Service) service.Executor
	// local is the executor make made, when it is the local one.
	local *executor.Local
	// drainTasks refuses new tasks and lets the running ones finish for
	// up to --shutdown-timeout, suspending the rest (nil: nothing runs
	// here); closeAll closes what prepare opened.
	drainTasks, closeAll func()
	drainOnce            sync.Once
	// sandboxes is the local executor's provider, opening; starting
	// gates its tasks until start has recovered those a stop left, and
	// started is closed then (nil for the Temporal executor).
	sandboxes *pendingSandboxes
	starting  *startingExecutor
	started   chan struct{}
	logger    *slog.Logger
}

// drain runs drainTasks once, however often it is called.
func (rt *taskRuntime) drain() {
	rt.drainOnce.Do(func() {
		if rt.drainTasks != nil {
			rt.drainTasks()
		}
	})
}

// stop drains, if that was not done, then closes.
func (rt *taskRuntime) stop() {
	rt.drain()
	rt.closeAll()
}

// prepare readies serve's executor: the Temporal client, or the local
// executor's sandboxes (a machine without them runs no tasks, and says
// why).
func (f *taskFlags) prepare(ctx context.Context, e *env, logger *slog.Logger, db store.Store, blobs blob.Store,
	sbf sandboxFlags, sandboxDir, cacheDir string, keep bool) (*taskRuntime, error) {
	if f.executor == "temporal" {
		c, err := f.temporal.dial(slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(e.stderr, "skilld: tasks run on workers of task queue %q (namespace %q at %s)\n", f.temporal.queue, f.temporal.namespace, f.temporal.hostPort)
		// Workers run the tasks; the client closes after the last request
		// that could use it.
		return &taskRuntime{closeAll: c.Close, make: func(*service.Service) service.Executor {
			return &skdtemporal.Executor{Client: c, TaskQueue: f.temporal.queue, DB: db, Heartbeat: f.temporal.heartbeat}
		}}, nil
	}
	// The sandbox is checked while the server starts listening; what
	// needs it waits (pendingSandboxes, startingExecutor).
	pending := openSandboxes(func() (*sandboxes, error) {
		sbx, err := sbf.open(ctx, e.stderr, sandboxDir, cacheDir)
		if err != nil {
			fmt.Fprintf(e.stderr, "skilld: tasks are disabled: %s\n", errorText(err))
		} else {
			fmt.Fprintln(e.stderr, describe(sbx.Info()))
		}
		return sbx, err
	})
	rt := &taskRuntime{sandboxes: pending, logger: logger}
	rt.make = func(svc *service.Service) service.Executor {
		rt.local = newExecutor(svc, db, blobs, &sandboxes{Provider: pending}, nil, &models{tokens: tokenizer.NewCache(), scripted: os.Getenv("SKILLD_ALLOW_SCRIPTED_MODELS") == "1"},
			execOptions{network: sbf.network, keep: keep, maxRunning: f.maxRunning, taskTimeout: f.taskTimeout, outputBudget: f.outputBytes, observer: f.observer, logger: logger})
		rt.starting = &startingExecutor{Local: rt.local, ready: make(chan struct{})}
		return rt.starting
	}
	rt.drainTasks = func() {
		// The sandbox check may still be running (serve stopped before it
		// ended): let it finish and say what it found first, so that
		// nothing else writes to stderr meanwhile.
		<-pending.done
		if rt.local != nil {
			if rt.started != nil {
				<-rt.started
			}
			fmt.Fprintf(e.stderr, "skilld: letting running tasks finish for up to %s; the rest resume at the next start\n", f.shutdownTimeout)
			rt.local.Drain(f.shutdownTimeout)
		}
	}
	rt.closeAll = pending.close
	return rt, nil
}

// start returns what streams a task's events live (nil: streams poll
// the log), and, once the sandbox is open, picks up the tasks of this
// server that a stop left unfinished. Until then the executor takes no
// task (startingExecutor); without a sandbox it refuses them with the
// reason, and the tasks left wait for a start that can run them.
func (rt *taskRuntime) start(ctx context.Context) (httpapi.Watcher, error) {
	rt.started = make(chan struct{})
	if rt.local == nil {
		close(rt.started)
		return nil, nil
	}
	go func() {
		defer close(rt.started)
		if _, err := rt.sandboxes.wait(ctx); err != nil {
			// They would only fail here; a start that can run them resumes them.
			rt.logger.Warn("tasks left by a previous run are not resumed", "reason", skilld.ErrorMessage(err))
			rt.starting.open(err)
			return
		}
		err := rt.local.Recover(ctx)
		if err != nil {
			rt.logger.Error("recovering the tasks a previous run left; tasks are disabled", "err", err)
			err = skilld.Errorf(skilld.EUNAVAILABLE, "tasks are disabled: the tasks a previous run left could not be recovered: %w", err)
		}
		rt.starting.open(err)
	}()
	return rt.local, nil
}

// parseStorageQuota reads --workspace-storage-quota into quotaBytes (when
// serve registered it), and reports whether it is a size.
func (f *taskFlags) parseStorageQuota() bool {
	if f.storageQuota == "" {
		return true
	}
	n, err := sandbox.ParseSize(f.storageQuota)
	f.quotaBytes = n
	return err == nil
}

// parseOutputBudget reads --task-output-budget into outputBytes, and
// reports whether it is a size of at least 1 MiB.
func (f *taskFlags) parseOutputBudget() bool {
	n, err := sandbox.ParseSize(f.outputBudget)
	f.outputBytes = n
	return err == nil && n >= 1<<20
}
