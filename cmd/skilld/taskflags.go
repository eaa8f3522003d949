package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/skilld/skilld/executor"
	"github.com/skilld/skilld/service"
)

// taskFlags are serve's flags for running tasks.
type taskFlags struct {
	maxRunning      int
	taskTimeout     time.Duration
	shutdownTimeout time.Duration
	envErr          error
}

// DefaultShutdownTimeout is how long a stopping server lets running tasks
// go on before it suspends them for the next start.
const DefaultShutdownTimeout = 30 * time.Second

func (f *taskFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&f.maxRunning, "max-running-tasks", executor.DefaultMaxRunning,
		"tasks run at once; the others wait, queued, first come first served (env SKILLD_MAX_RUNNING_TASKS)")
	fs.DurationVar(&f.taskTimeout, "task-timeout", executor.DefaultTaskTimeout,
		"how long a task may run from its start when its agent sets no config.timeout (env SKILLD_TASK_TIMEOUT)")
	fs.DurationVar(&f.shutdownTimeout, "shutdown-timeout", DefaultShutdownTimeout,
		"on stop, how long running tasks may go on before they are suspended, to resume at the next start\n(env SKILLD_SHUTDOWN_TIMEOUT)")
	f.envErr = envFlags(fs, map[string]string{"max-running-tasks": "SKILLD_MAX_RUNNING_TASKS", "task-timeout": "SKILLD_TASK_TIMEOUT", "shutdown-timeout": "SKILLD_SHUTDOWN_TIMEOUT"})
}

func (f *taskFlags) check() error {
	switch {
	case f.envErr != nil:
		return f.envErr
	case f.maxRunning < 1:
		return fmt.Errorf("--max-running-tasks must be at least 1, not %d", f.maxRunning)
	case f.taskTimeout < time.Second || f.taskTimeout > service.MaxTaskTimeout:
		return fmt.Errorf("--task-timeout must be from 1s to %s, not %s", service.MaxTaskTimeout, f.taskTimeout)
	case f.shutdownTimeout < 0:
		return fmt.Errorf("--shutdown-timeout must not be negative")
	}
	return nil
}
