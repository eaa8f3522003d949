package executortest

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/skilld/skilld/store"
)

// FloorDB is the simplest way to make log entries durable, for a load to
// be measured against: one row inserted per transaction, straight into a
// table shaped like the task log, through the database's driver with the
// store's settings, and nothing else.
type FloorDB interface {
	// Insert inserts one row in a transaction of its own.
	Insert(ctx context.Context, taskID string, seq int64, kind string, payload []byte) error
}

// BenchVsFloor runs l as Bench does and then, on fresh databases from
// floor, the floor three times: as many single-row transactional inserts
// as the load appended log entries, of the load's mean payload size, from
// l.Tasks writers at once. It reports both rates side by side and their
// ratio (1: as fast as the floor), by wall time (the floor's median run)
// and by this process's CPU time per entry, which a busy machine disturbs
// less.
func BenchVsFloor(b *testing.B, newEnv NewEnv, open func(testing.TB) store.Store, floor func(testing.TB) FloorDB, l Load) {
	var r LoadResult
	var floorWall, floorCPU time.Duration
	for range b.N {
		m := NewModel()
		db := CountWrites(open(b))
		e := newEnv(b, db, m, Options{MaxRunning: l.MaxRunning})
		r = runLoad(b, e, m, db, l)
		if r.Entries == 0 {
			b.Fatal("the load appended no log entries")
		}
		var walls []time.Duration
		floorCPU = 0
		for range 3 {
			cpu := cpuTime()
			walls = append(walls, runFloor(b, floor(b), l.Tasks, int(r.Entries), int(r.Bytes/r.Entries)))
			floorCPU += cpuTime() - cpu
		}
		slices.Sort(walls)
		floorWall, floorCPU = walls[1], floorCPU/3
	}
	r.report(b, l.Tasks)
	entries := float64(r.Entries)
	skilld, rate := entries/r.Wall.Seconds(), entries/floorWall.Seconds()
	b.ReportMetric(skilld, "entries/s")
	b.ReportMetric(rate, "floor-entries/s")
	b.ReportMetric(skilld/rate, "of-floor")
	b.ReportMetric(float64(r.CPU.Microseconds())/entries, "CPU-µs/entry")
	b.ReportMetric(float64(floorCPU.Microseconds())/entries, "floor-CPU-µs/entry")
	b.ReportMetric(float64(floorCPU)/float64(r.CPU), "of-floor-CPU")
	b.ReportMetric(entries/float64(r.Steps), "entries/step")
}

// runFloor inserts n rows of size bytes from writers goroutines, each its
// share of the rows as the log of one task, and returns the time it took.
func runFloor(b *testing.B, db FloorDB, writers, n, size int) time.Duration {
	payload := []byte(`{"x":"` + string(bytes.Repeat([]byte("x"), max(size-8, 0))) + `"}`)
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	began := time.Now()
	for w := range writers {
		share := n / writers
		if w < n%writers {
			share++
		}
		wg.Go(func() {
			task := fmt.Sprintf("task-%d", w)
			for seq := range int64(share) {
				if err := db.Insert(b.Context(), task, seq+1, "event", payload); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	wall := time.Since(began)
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	return wall
}
