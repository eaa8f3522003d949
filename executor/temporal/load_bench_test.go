package temporal_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/skilld/skilld/executor/executortest"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/storetest"
)

// BenchmarkStepLatency runs five tasks of 40 write_file steps one after
// another on the dev server with a worker in this process: what Temporal
// adds to a step over the local executor's BenchmarkStep. Its floor is
// BenchmarkBareWorkflow/local, the same workflow shape with no skilld
// work; run both together with -benchtime=1x -count 5.
func BenchmarkStepLatency(b *testing.B) {
	executortest.Bench(b, benchEnv(b), sqlite, executortest.Load{Tasks: 1, Steps: benchSteps, Rounds: benchRounds})
}

const benchSteps, benchRounds = 40, 5

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

// BenchmarkBareWorkflow is the floor of BenchmarkStepLatency: workflows
// of its shape — a begin, a prepare, then per step a model call and a
// tool call, and a last model call — whose activities do nothing, in a
// worker that does nothing else, timed the same way (from a model call's
// end to the next one's start). local runs them as local activities, as
// TaskWorkflow does; activities as activities, the dev server's dispatch.
func BenchmarkBareWorkflow(b *testing.B) {
	for _, local := range []bool{true, false} {
		name := "activities"
		if local {
			name = "local"
		}
		b.Run(name, func(b *testing.B) { benchBare(b, local) })
	}
}

func benchBare(b *testing.B, local bool) {
	c := server.Client(b)
	queue := "bare-" + random()
	clock := &bareClock{}
	w := worker.New(c, queue, worker.Options{})
	w.RegisterWorkflow(bareWorkflow)
	w.RegisterActivityWithOptions(clock.model, activity.RegisterOptions{Name: "bare.Model"})
	w.RegisterActivityWithOptions(bareActivity, activity.RegisterOptions{Name: "bare.Other"})
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	var total time.Duration
	var gaps []time.Duration
	for range b.N {
		gaps = gaps[:0]
		for range benchRounds {
			clock.last = time.Time{}
			began := time.Now()
			run, err := c.ExecuteWorkflow(b.Context(), client.StartWorkflowOptions{TaskQueue: queue}, bareWorkflow, benchSteps, local)
			if err != nil {
				b.Fatal(err)
			}
			if err := run.Get(b.Context(), nil); err != nil {
				b.Fatal(err)
			}
			total += time.Since(began)
			gaps = append(gaps, clock.take()...)
		}
	}
	slices.Sort(gaps)
	at := func(q float64) float64 { return float64(gaps[int(q*float64(len(gaps)-1))].Microseconds()) / 1000 }
	b.ReportMetric(at(0.5), "p50-step-ms")
	b.ReportMetric(at(0.99), "p99-step-ms")
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N*benchRounds*(3+2*benchSteps)), "ms/activity")
}

// bareClock times the gaps between a workflow's model calls; the
// workflows of a benchmark run one at a time.
type bareClock struct {
	mu   sync.Mutex
	last time.Time
	gaps []time.Duration
}

func (c *bareClock) model(context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if !c.last.IsZero() {
		c.gaps = append(c.gaps, now.Sub(c.last))
	}
	c.last = now
	return nil
}

func (c *bareClock) take() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.gaps
	c.gaps = nil
	return g
}

func bareActivity(context.Context) error { return nil }

func bareWorkflow(ctx workflow.Context, steps int, local bool) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: time.Minute})
	run := func(name string) error {
		if local {
			return workflow.ExecuteLocalActivity(ctx, name).Get(ctx, nil)
		}
		return workflow.ExecuteActivity(ctx, name).Get(ctx, nil)
	}
	names := []string{"bare.Other", "bare.Other"} // begin, prepare
	for range steps {
		names = append(names, "bare.Model", "bare.Other")
	}
	for _, name := range append(names, "bare.Model") {
		if err := run(name); err != nil {
			return err
		}
	}
	return nil
}
