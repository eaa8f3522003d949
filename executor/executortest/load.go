package executortest

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store"
)

// Load is what an executor benchmark asks of an Env: Tasks tasks started
// at once, each Steps write_file calls and then an answer, from a model
// that answers at once; Rounds such loads one after the other (0: one);
// MaxRunning is the executor's Options.MaxRunning. A step is one model
// call and what follows it.
type Load struct {
	Tasks, Steps, Rounds int
	MaxRunning           int
}

// NewEnv makes an Env over db whose executor answers model references
// with m; Factory's counterpart for benchmarks.
type NewEnv func(tb testing.TB, db store.Store, m *Model, o Options) *Env

// Bench runs l, on a fresh Env over a fresh store from open for each of
// b.N iterations, and reports the last on b. One iteration is a whole
// load: run it with -benchtime=1x.
func Bench(b *testing.B, newEnv NewEnv, open func(testing.TB) store.Store, l Load) {
	var r LoadResult
	for range b.N {
		m := NewModel()
		db := CountWrites(open(b))
		e := newEnv(b, db, m, Options{MaxRunning: l.MaxRunning})
		r = LoadResult{}
		for range max(l.Rounds, 1) {
			r = r.add(runLoad(b, e, m, db, l))
		}
	}
	r.report(b, l.Tasks*max(l.Rounds, 1))
}

// BenchIdle reports what n tasks waiting for an approval hold, per task
// (idleTask), on an Env as Bench makes them.
func BenchIdle(b *testing.B, newEnv NewEnv, open func(testing.TB) store.Store, n int) {
	var heap, goroutines float64
	for range b.N {
		m := NewModel()
		e := newEnv(b, CountWrites(open(b)), m, Options{MaxRunning: n})
		heap, goroutines = idleTask(b, e, m, n)
	}
	b.ReportMetric(heap/1024, "KiB/idle-task")
	b.ReportMetric(goroutines, "goroutines/idle-task")
}

// LoadResult is what a load measured.
type LoadResult struct {
	// Wall is from the first task's start to the last task's end.
	Wall time.Duration
	// Overheads are, for every step after a task's first, the time from
	// the model's previous answer to this call: logging the answer,
	// running the tool, logging its result, building the next request.
	Overheads []time.Duration
	// Steps is how many model calls the tasks made.
	Steps int
	// Writes is how many write transactions reached the database;
	// Entries and Bytes the task log entries written and their payloads'
	// bytes.
	Writes, Entries, Bytes int64
	// PeakRSS is the process's peak resident set, in bytes.
	PeakRSS int64
	// CPU is the process's CPU time (user and system) during the load.
	CPU time.Duration
}

// add sums two results of loads run one after the other.
func (r LoadResult) add(o LoadResult) LoadResult {
	return LoadResult{Wall: r.Wall + o.Wall, Overheads: append(r.Overheads, o.Overheads...), Steps: r.Steps + o.Steps,
		Writes: r.Writes + o.Writes, Entries: r.Entries + o.Entries, Bytes: r.Bytes + o.Bytes, PeakRSS: max(r.PeakRSS, o.PeakRSS), CPU: r.CPU + o.CPU}
}

// report puts the result on b as metrics.
func (r LoadResult) report(b *testing.B, tasks int) {
	slices.Sort(r.Overheads)
	at := func(q float64) float64 {
		if len(r.Overheads) == 0 {
			return 0
		}
		return float64(r.Overheads[int(q*float64(len(r.Overheads)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(float64(tasks)/r.Wall.Seconds(), "tasks/s")
	b.ReportMetric(at(0.5), "p50-step-ms")
	b.ReportMetric(at(0.99), "p99-step-ms")
	b.ReportMetric(float64(r.Writes)/float64(max(r.Steps, 1)), "writes/step")
	b.ReportMetric(float64(r.PeakRSS)/(1<<20), "peak-RSS-MiB")
	b.ReportMetric(float64(r.CPU.Microseconds())/1000/float64(max(r.Steps, 1)), "CPU-ms/step")
}

// runLoad runs l on e, whose database is db, and measures it. m must be
// the model behind e.
func runLoad(b *testing.B, e *Env, m *Model, db *CountingStore, l Load) LoadResult {
	b.Helper()
	ag := agentWith(b, e, fmt.Sprintf("load-%d", time.Now().UnixNano()), skilld.AgentConfig{})
	clock := &stepClock{last: map[string]time.Time{}}
	inputs := make([]string, l.Tasks)
	for i := range inputs {
		inputs[i] = fmt.Sprintf("load %s task %d", ag.Name, i)
		turns := make([]Turn, 0, l.Steps+1)
		for s := range l.Steps {
			turns = append(turns, clock.timed(inputs[i], Call(agent.ToolWriteFile, map[string]string{
				"path": fmt.Sprintf("notes/%d.md", s), "content": "step " + fmt.Sprint(s)})))
		}
		m.Script(inputs[i], append(turns, clock.timed(inputs[i], Answer("done")))...)
	}
	writes, entries, bytes, cpu := db.Writes(), db.entries.Load(), db.bytes.Load(), cpuTime()
	began := time.Now()
	ids := startAll(b, e, ag, inputs)
	waitAll(b, e, ids, skilld.TaskCompleted)
	r := LoadResult{Wall: time.Since(began), Overheads: clock.overheads, Steps: l.Tasks * (l.Steps + 1),
		Writes: db.Writes() - writes, Entries: db.entries.Load() - entries, Bytes: db.bytes.Load() - bytes, PeakRSS: peakRSS(), CPU: cpuTime() - cpu}
	return r
}

// idleTask measures what a task waiting for an approval holds: the heap
// and goroutines of n such tasks, per task. It leaves them cancelled.
func idleTask(b *testing.B, e *Env, m *Model, n int) (heapBytes, goroutines float64) {
	b.Helper()
	ag := agentWith(b, e, fmt.Sprintf("idle-%d", time.Now().UnixNano()),
		skilld.AgentConfig{Tools: skilld.ToolPolicy{RequireApproval: []string{agent.ToolWriteFile}}})
	inputs := make([]string, n)
	for i := range inputs {
		inputs[i] = fmt.Sprintf("idle %s task %d", ag.Name, i)
		m.Script(inputs[i], Call(agent.ToolWriteFile, map[string]string{"path": "x.md", "content": "x"}), Answer("done"))
	}
	heap0, g0 := settled()
	ids := startAll(b, e, ag, inputs)
	waitAll(b, e, ids, skilld.TaskWaitingForApproval)
	heap1, g1 := settled()
	for _, id := range ids {
		if _, err := e.Service.CancelTask(b.Context(), e.Actor, service.CancelTaskParams{TaskRef: service.TaskRef{ID: id}}); err != nil {
			b.Fatal(err)
		}
	}
	waitAll(b, e, ids, skilld.TaskCancelled)
	return float64(int64(heap1)-int64(heap0)) / float64(n), float64(g1-g0) / float64(n)
}

// stepClock times the gaps between a task's model calls.
type stepClock struct {
	mu        sync.Mutex
	last      map[string]time.Time
	overheads []time.Duration
}

func (c *stepClock) timed(input string, turn Turn) Turn {
	return func(ctx context.Context, req *model.Request) (*model.Response, error) {
		now := time.Now()
		c.mu.Lock()
		if last, ok := c.last[input]; ok {
			c.overheads = append(c.overheads, now.Sub(last))
		}
		c.mu.Unlock()
		resp, err := turn(ctx, req)
		c.mu.Lock()
		c.last[input] = time.Now()
		c.mu.Unlock()
		return resp, err
	}
}

// startAll starts a task per input from a few clients at once.
func startAll(b *testing.B, e *Env, ag *skilld.Agent, inputs []string) []string {
	ids := make([]string, len(inputs))
	var wg sync.WaitGroup
	var next atomic.Int64
	for range 8 {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(inputs); i = int(next.Add(1) - 1) {
				ids[i] = start(b, e, ag, inputs[i]).ID
			}
		})
	}
	wg.Wait()
	return ids
}

// waitAll polls until every task is in status st; a task that ends in
// another way fails the benchmark.
func waitAll(b *testing.B, e *Env, ids []string, st skilld.TaskStatus) {
	deadline := time.Now().Add(10 * time.Minute)
	for _, id := range ids {
		for {
			task, err := e.Service.GetTask(b.Context(), e.Actor, service.GetTaskParams{TaskRef: service.TaskRef{ID: id}})
			if err != nil {
				b.Fatal(err)
			}
			if task.Status == st {
				break
			}
			if task.Status.Done() || time.Now().After(deadline) {
				b.Fatalf("task %s is %s (%+v), want %s", id, task.Status, task.Error, st)
			}
			time.Sleep(25 * time.Millisecond)
		}
	}
}

// settled collects garbage and returns the live heap and goroutines.
func settled() (uint64, int) {
	var ms runtime.MemStats
	for range 3 {
		runtime.GC()
	}
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc, runtime.NumGoroutine()
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func peakRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Maxrss << 10 // kilobytes on Linux
}

// CountingStore counts the write transactions that reach a store: each
// write call made outside a transaction, and each transaction.
type CountingStore struct {
	store.Store
	writes atomic.Int64
	// entries and bytes count the task log entries appended and their
	// payload bytes.
	entries, bytes atomic.Int64
}

// CountWrites wraps db.
func CountWrites(db store.Store) *CountingStore { return &CountingStore{Store: db} }

// Writes is how many write transactions there were so far.
func (c *CountingStore) Writes() int64 { return c.writes.Load() }

func (c *CountingStore) Tx(ctx context.Context, fn func(q store.Querier) error) error {
	c.writes.Add(1)
	return c.Store.Tx(ctx, fn)
}

func (c *CountingStore) TaskCreate(ctx context.Context, p *store.TaskCreateParams) (*skilld.Task, error) {
	c.writes.Add(1)
	return c.Store.TaskCreate(ctx, p)
}

func (c *CountingStore) TaskUpdate(ctx context.Context, p *store.TaskUpdateParams) (*skilld.Task, error) {
	c.writes.Add(1)
	return c.Store.TaskUpdate(ctx, p)
}

func (c *CountingStore) TaskLogAppend(ctx context.Context, p *store.TaskLogAppendParams) (*skilld.TaskLogEntry, error) {
	c.writes.Add(1)
	e, err := c.Store.TaskLogAppend(ctx, p)
	if err == nil {
		c.entries.Add(1)
		c.bytes.Add(int64(len(p.Payload)))
	}
	return e, err
}

func (c *CountingStore) TaskLogAppendBatch(ctx context.Context, p *store.TaskLogAppendBatchParams) ([]*skilld.TaskLogEntry, error) {
	c.writes.Add(1)
	es, err := c.Store.TaskLogAppendBatch(ctx, p)
	if err == nil {
		c.entries.Add(int64(len(p.Entries)))
		for _, e := range p.Entries {
			c.bytes.Add(int64(len(e.Payload)))
		}
	}
	return es, err
}

func (c *CountingStore) TaskOutputAdd(ctx context.Context, p *store.TaskOutputParams) error {
	c.writes.Add(1)
	return c.Store.TaskOutputAdd(ctx, p)
}

func (c *CountingStore) TaskPackagesRelease(ctx context.Context, p *store.TaskPackagesReleaseParams) ([]string, error) {
	c.writes.Add(1)
	return c.Store.TaskPackagesRelease(ctx, p)
}

func (c *CountingStore) EventAppend(ctx context.Context, p *store.EventAppendParams) (*skilld.Event, error) {
	c.writes.Add(1)
	return c.Store.EventAppend(ctx, p)
}
