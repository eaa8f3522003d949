package executor_test

import (
	"testing"

	"github.com/skilld/skilld/executor/executortest"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/storetest"
)

// loadStores are the databases the load benchmarks run on.
var loadStores = []struct {
	name string
	open func(testing.TB) store.Store
}{
	{"sqlite", func(tb testing.TB) store.Store { return storetest.OpenSQLite(tb) }},
	{"postgres", func(tb testing.TB) store.Store { return storetest.OpenPostgres(tb) }},
}

// BenchmarkLoad runs 500 tasks at once on the local executor, each five
// write_file steps and an answer from a model with no think time, with
// room for all of them and with the default pool of 64. One iteration is
// one load: run it with -benchtime=1x.
func BenchmarkLoad(b *testing.B) {
	for _, st := range loadStores {
		for _, pool := range []struct {
			name string
			max  int
		}{{"pool-500", 500}, {"pool-64", 0}} {
			b.Run(st.name+"/"+pool.name, func(b *testing.B) {
				executortest.Bench(b, localEnv, st.open, executortest.Load{Tasks: 500, Steps: 5, MaxRunning: pool.max})
			})
		}
	}
}

// BenchmarkStep runs ten tasks of 40 write_file steps one after another:
// the overhead of a step with nothing else running.
func BenchmarkStep(b *testing.B) {
	for _, st := range loadStores {
		b.Run(st.name, func(b *testing.B) {
			executortest.Bench(b, localEnv, st.open, executortest.Load{Tasks: 1, Steps: 40, Rounds: 10})
		})
	}
}

// BenchmarkIdleTask measures what 500 tasks waiting for an approval hold
// in memory, per task.
func BenchmarkIdleTask(b *testing.B) {
	executortest.BenchIdle(b, localEnv, loadStores[0].open, 500)
}
