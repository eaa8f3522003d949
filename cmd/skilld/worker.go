package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"go.temporal.io/sdk/worker"

	"github.com/skilld/skilld/agent/tokenizer"
	skdtemporal "github.com/skilld/skilld/executor/temporal"
	"github.com/skilld/skilld/service"
)

// runWorker runs tasks for servers started with --executor temporal: it
// polls the task queue, and runs each task's steps on this machine, in its
// sandboxes, over the storage every server and worker shares.
func runWorker(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "worker", "--temporal HOST:PORT [--namespace NS] [--task-queue Q] [storage flags] [sandbox flags]\n\n"+
		"Runs skilld tasks from a Temporal task queue, for servers started with\n"+
		"--executor temporal. Every server and worker must share the database (PostgreSQL)\n"+
		"and the blob store (S3) — and, for a task to keep its sandbox files when\n"+
		"another worker takes it over, the work dir. Models come from the worker's\n"+
		"environment (OPENAI_BASE_URL/OPENAI_API_KEY, ANTHROPIC_BASE_URL/ANTHROPIC_API_KEY).")
	var sf storageFlags
	sf.register(fs)
	var sbf sandboxFlags
	sbf.register(fs)
	var tf temporalFlags
	tf.register(fs)
	xf := taskFlags{executor: "temporal"}
	xf.register(fs)
	var of obsFlags
	of.register(fs)
	keep := fs.Bool("keep-sandboxes", os.Getenv("SKILLD_KEEP_SANDBOXES") == "1",
		"keep each task's sandbox folder after the task ends (env SKILLD_KEEP_SANDBOXES=1)")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageErrorf(fs, "unexpected argument %q", pos[0])
	}
	if err := errors.Join(sbf.check(), xf.check(), of.check()); err != nil {
		return usageErrorf(fs, "%s", errorText(err))
	}
	fail := func(err error) int {
		fmt.Fprintf(e.stderr, "skilld worker: %s\n", errorText(err))
		return exitFailure
	}
	db, blobs, err := sf.openExisting(ctx)
	if err != nil {
		return fail(err)
	}
	defer db.Close()
	defer blobs.Close()
	workDir, err := sf.workDir()
	if err != nil {
		return fail(err)
	}
	sbx, err := sbf.open(ctx, e.stderr, filepath.Join(workDir, "sandboxes"), filepath.Join(workDir, "skill-cache"))
	if err != nil {
		return fail(err)
	}
	defer sbx.close()
	fmt.Fprintln(e.stderr, describe(sbx.Info()))
	logger := of.logger(e.stderr)
	obs, err := of.open(ctx, nil, "skilld-worker") // traces only: a worker serves no /metrics
	if err != nil {
		return fail(err)
	}
	defer obs.close(context.WithoutCancel(ctx))
	c, err := tf.dial(slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		return fail(err)
	}
	defer c.Close()
	svc := service.New(db, blobs, nil, service.Config{})
	runner := newExecutor(svc, db, blobs, sbx, nil, &models{tokens: tokenizer.NewCache(), scripted: os.Getenv("SKILLD_ALLOW_SCRIPTED_MODELS") == "1"},
		execOptions{network: sbf.network, keep: *keep, taskTimeout: xf.taskTimeout, outputBudget: xf.outputBytes, observer: obs.observer(), logger: logger})
	acts := &skdtemporal.Activities{Runner: runner, DB: db, Logger: logger}
	// On stop, the tasks go on to their next model call and are handed
	// over there; steps in flight get --shutdown-timeout to finish; then
	// the runs are suspended, and other workers take them over.
	w := skdtemporal.NewWorker(c, tf.queue, acts, worker.Options{MaxConcurrentActivityExecutionSize: xf.maxRunning, WorkerStopTimeout: xf.shutdownTimeout})
	if err := w.Start(); err != nil {
		return fail(fmt.Errorf("starting the worker: %w", err))
	}
	evictCtx, stopEvict := context.WithCancel(context.Background())
	go acts.Evict(evictCtx)
	fmt.Fprintf(e.stderr, "skilld: worker polling task queue %q of namespace %q at %s, %d steps at once\n", tf.queue, tf.namespace, tf.hostPort, xf.maxRunning)
	<-ctx.Done()
	fmt.Fprintln(e.stderr, "skilld: worker stopping; its tasks go on on other workers")
	stopEvict()
	acts.Drain()
	w.Stop()
	acts.Stop()
	return exitOK
}
