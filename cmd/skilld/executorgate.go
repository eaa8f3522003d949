package main

import (
	"context"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/executor"
)

// startingExecutor is serve's local executor while its sandbox provider
// opens and the tasks a previous run left are recovered, both after the
// server listens: a call that would start, answer or stop a task waits
// until then, so no task starts on a sandbox not yet checked, nor ahead
// of the tasks a restart resumes, and a server without a sandbox refuses
// tasks with the reason as it always did. Everything else (positions,
// model checks, event streams) is the executor's own.
type startingExecutor struct {
	*executor.Local
	ready chan struct{}
	err   error // why tasks cannot run, when ready is closed
}

// open lets the calls through; err, when not nil, refuses tasks.
func (x *startingExecutor) open(err error) {
	x.err = err
	close(x.ready)
}

// wait returns when tasks can be taken, or why they cannot.
func (x *startingExecutor) wait(ctx context.Context) error {
	select {
	case <-x.ready:
		return x.err
	case <-ctx.Done():
		return skilld.Errorf(skilld.EUNAVAILABLE, "the server is still starting: %w", context.Cause(ctx))
	}
}

func (x *startingExecutor) Ready() error {
	<-x.ready
	if x.err != nil {
		return x.err
	}
	return x.Local.Ready()
}

func (x *startingExecutor) Start(ctx context.Context, t *skilld.Task) error {
	if err := x.wait(ctx); err != nil {
		return err
	}
	return x.Local.Start(ctx, t)
}

func (x *startingExecutor) Cancel(ctx context.Context, taskID string) (bool, error) {
	// Without a sandbox no task runs here, and the executor says so.
	_ = x.wait(ctx)
	return x.Local.Cancel(ctx, taskID)
}

func (x *startingExecutor) Decide(ctx context.Context, taskID, callID string, approved bool) error {
	_ = x.wait(ctx)
	return x.Local.Decide(ctx, taskID, callID, approved)
}
