package temporal_test

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/skilld/skilld/executor/executortest"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/storetest"
)

// BenchmarkStep runs five tasks of 40 write_file steps one after another
// on the dev server with a worker in this process: what Temporal adds to
// a step over the local executor's BenchmarkStep. Run it with -benchtime=1x.
func BenchmarkStep(b *testing.B) {
	executortest.Bench(b, benchEnv(b), sqlite, executortest.Load{Tasks: 1, Steps: 40, Rounds: 5})
}

// BenchmarkLoad runs 100 tasks at once, each five write_file steps.
func BenchmarkLoad(b *testing.B) {
	executortest.Bench(b, benchEnv(b), sqlite, executortest.Load{Tasks: 100, Steps: 5})
}

func sqlite(tb testing.TB) store.Store { return storetest.OpenSQLite(tb) }

// benchEnv makes Envs on the dev server.
func benchEnv(b *testing.B) executortest.NewEnv {
	c := server.Client(b)
	return func(tb testing.TB, db store.Store, m *executortest.Model, o executortest.Options) *executortest.Env {
		return temporalEnv(tb, c, db, m, o).Env
	}
}

// BenchmarkBareActivity is the dev server's own cost, for comparison: a
// workflow of 20 no-op activities in a row, in a worker that does nothing
// else.
func BenchmarkBareActivity(b *testing.B) {
	const activities = 20
	c := server.Client(b)
	queue := "bare-" + random()
	w := worker.New(c, queue, worker.Options{})
	w.RegisterWorkflow(bareWorkflow)
	w.RegisterActivity(bareActivity)
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	var total time.Duration
	for range b.N {
		began := time.Now()
		run, err := c.ExecuteWorkflow(b.Context(), client.StartWorkflowOptions{TaskQueue: queue}, bareWorkflow, activities)
		if err != nil {
			b.Fatal(err)
		}
		if err := run.Get(b.Context(), nil); err != nil {
			b.Fatal(err)
		}
		total += time.Since(began)
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N*activities), "ms/activity")
}

func bareActivity(context.Context) error { return nil }

func bareWorkflow(ctx workflow.Context, n int) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	for range n {
		if err := workflow.ExecuteActivity(ctx, bareActivity).Get(ctx, nil); err != nil {
			return err
		}
	}
	return nil
}
