package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/metrics"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store"
)

// retentionFlags is serve's --task-retention: how long finished tasks are
// kept where a workspace does not say.
type retentionFlags struct{ keep time.Duration }

func (f *retentionFlags) register(fs *flag.FlagSet) {
	fs.DurationVar(&f.keep, "task-retention", 0, fmt.Sprintf("delete finished tasks, with their logs and stored outputs, this long after they ended, such as 720h;\n"+
		"0 keeps them forever, any other value is at least %s; a workspace may set its own (env SKILLD_TASK_RETENTION)", service.MinTaskRetention))
}

// envVars names the flag's environment variable, for envFlags.
func (retentionFlags) envVars() map[string]string {
	return map[string]string{"task-retention": "SKILLD_TASK_RETENTION"}
}

func (f *retentionFlags) check() error {
	if err := service.CheckTaskRetention(f.keep); err != nil {
		return fmt.Errorf("--task-retention: %s", skilld.ErrorMessage(err))
	}
	return nil
}

// sweepTasks runs the service's retention sweeper in the background: one
// goroutine, whatever the settings, because a workspace may keep its
// tasks for less than the server does. Each pass's deletions are counted
// (m may be nil) and its failures logged; the next pass tries again. stop
// ends the sweeper and waits for it, so the stores it uses are closed
// after it.
func sweepTasks(ctx context.Context, svc *service.Service, logger *slog.Logger, m *metrics.Metrics) (stop func()) {
	return inBackground(ctx, func(ctx context.Context) {
		svc.SweepTasks(ctx, service.TaskSweep{Report: func(n int, err error) {
			if m != nil {
				m.TasksExpired(n)
			}
			if n > 0 {
				logger.Info("deleted expired tasks", "tasks", n)
			}
			if err != nil {
				logger.Warn("deleting expired tasks", "error", err)
			}
		}})
	})
}

// sweepUsage runs the service's skill usage indexer in the background,
// as sweepTasks runs the retention sweeper; its failures are logged and
// the next pass tries again.
func sweepUsage(ctx context.Context, svc *service.Service, logger *slog.Logger) (stop func()) {
	return inBackground(ctx, func(ctx context.Context) {
		svc.SweepSkillUsage(ctx, service.UsageSweep{Report: func(_ int, err error) {
			if err != nil {
				logger.Warn("indexing skill usage", "error", err)
			}
		}})
	})
}

// inBackground runs run in a goroutine until stop, which cancels its
// context and waits for it, so the stores it uses are closed after it.
func inBackground(ctx context.Context, run func(context.Context)) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		run(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}

// usageIndexed counts indexed tasks in m (nil: nothing to count).
func usageIndexed(m *metrics.Metrics) func(string, []store.SkillUsage) {
	if m == nil {
		return nil
	}
	return m.SkillUsageIndexed
}

// rescanPackages scans, once in the background, the stored packages whose
// findings are not under this binary's scanner rules (after an upgrade
// that changed them, or packages from before the scanner), so the first
// request that asks about one does not pay for it. A failure is logged:
// the rest are scanned when first asked about. stop ends it and waits.
func rescanPackages(ctx context.Context, svc *service.Service, logger *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		n, err := svc.Packages().Rescan(ctx)
		if n > 0 {
			logger.Info("scanned stored packages under the current scanner rules", "packages", n)
		}
		if err != nil && ctx.Err() == nil {
			logger.Warn("scanning stored packages", "error", err)
		}
	}()
	return func() {
		cancel()
		<-done
	}
}
