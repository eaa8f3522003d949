package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/tool"
)

// TestResumeBetweenBatches runs the random tasks of TestResumeAnywhere
// with a log that takes batches (the runtime then appends the entries
// between two side effects together) and checks that batching loses and
// repeats nothing:
//
//   - at every side effect (model call, tool call) the log holds exactly
//     what it holds when every entry is appended on its own, and the
//     whole log is the same;
//   - a run whose log dies after any of its writes (a crash while it held
//     entries not written yet) and is resumed from what was written ends
//     with the uninterrupted run's log; of its side effects, only the
//     last — the one under way at the crash — may be missing from the
//     log it left and so run again, and nothing recorded there is asked
//     or run again. Half the seeds make the emit tool non-idempotent:
//     then no call of it runs twice at all.
//
// It runs 60 tasks, each killed after up to eight of its writes;
// SKILLD_RESUME_TASKS and SKILLD_RESUME_SEED work as for TestResumeAnywhere.
func TestResumeBetweenBatches(t *testing.T) { resumeSeeds(t, 60, resumeBetweenBatches) }

func resumeBetweenBatches(t *testing.T, seed uint64) error {
	idempotent := seed%2 == 0
	// The task batched, then with the same answers entry by entry.
	batched, fx, answers, err := watchedRun(t, seed, idempotent, func(m *agent.MemoryLog, writes *int) agent.Log { return writeCounter{m, writes} }, nil)
	if err != nil {
		return fmt.Errorf("batched: %w", err)
	}
	plain, plainFx, _, err := watchedRun(t, seed, idempotent, func(m *agent.MemoryLog, _ *int) agent.Log { return entryByEntry{m} }, &playback{answers: answers})
	if err != nil {
		return fmt.Errorf("entry by entry: %w", err)
	}
	if err := sameLog(batched.Entries(), plain.Entries()); err != nil {
		return fmt.Errorf("the batched log is not the log written entry by entry: %w", err)
	}
	if !slices.Equal(fx.effects, plainFx.effects) {
		return fmt.Errorf("side effects and the log entries before each: batched %v, entry by entry %v", fx.effects, plainFx.effects)
	}
	want := batched.Entries()
	totalTools := fx.count("tool")
	// Die after the first write, the last, and some between.
	rng := rand.New(rand.NewPCG(seed, 7))
	after := []int{0, fx.writes - 1}
	for range 6 {
		after = append(after, rng.IntN(fx.writes))
	}
	for _, w := range after {
		mem, crashed, _, err := watchedRun(t, seed, idempotent, func(m *agent.MemoryLog, _ *int) agent.Log { return &dyingLog{m: m, left: w} }, &playback{answers: answers})
		if !errors.Is(err, errDied) {
			return fmt.Errorf("dying after %d writes: the run ended with %v", w, err)
		}
		durable := mem.Entries()
		// The crashed run's side effects other than its last have their
		// outcome in what it left.
		last := ""
		if len(crashed.effects) > 0 {
			last = crashed.effects[len(crashed.effects)-1].kind
		}
		results := emitResults(durable)
		if n := crashed.count("tool"); n-boolInt(last == "tool") > results {
			return fmt.Errorf("dying after %d writes: %d tool calls ran, %d results are in the log, and only the last call may be under way", w, n, results)
		}
		// Resume from there.
		_, rcfg, history := randomSetup(t, seed)
		pb := &countingPlayback{playback: &playback{answers: answers}}
		var ran atomic.Int64
		countEmit(rcfg.Tools, idempotent, &ran)
		log := agent.NewMemoryLog(durable)
		rcfg.Model, rcfg.Log, rcfg.Outputs = pb, log, crashed.outputs
		if err := drain(rcfg, agent.Task{ID: "t", Input: "Do the task.", History: history, Resume: durable}, nil); err != nil {
			return fmt.Errorf("resumed after dying after %d writes: %w", w, err)
		}
		if idempotent {
			if err := sameLog(normalized(log.Entries()), normalized(want)); err != nil {
				return fmt.Errorf("resumed after dying after %d writes: %w", w, err)
			}
		}
		// The model: asked again only for the crashed run's last call.
		asked := crashed.count("model") + pb.next - pb.answered
		if repeated := asked - len(answers); repeated > boolInt(last == "model") || repeated < 0 && idempotent {
			return fmt.Errorf("dying after %d writes: the model was asked %d times in all, %d without the crash (the crashed run's last side effect: %q)", w, asked, len(answers), last)
		}
		// The tool: run again only when idempotent and under way at the
		// crash; never when it is not.
		runs := crashed.count("tool") + int(ran.Load())
		if repeated := runs - totalTools; repeated > boolInt(idempotent && last == "tool") {
			return fmt.Errorf("dying after %d writes: emit ran %d times in all, %d without the crash (idempotent %v, last side effect %q)", w, runs, totalTools, idempotent, last)
		}
	}
	return nil
}

// effect is a side effect and how many entries the log held when it
// started.
type effect struct {
	kind    string
	entries int
}

// effects records a run's side effects and its log's writes.
type effects struct {
	mu      sync.Mutex
	effects []effect
	writes  int
	outputs *agent.MemoryOutputs
}

func (f *effects) add(kind string, entries int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.effects = append(f.effects, effect{kind, entries})
}

func (f *effects) count(kind string) int {
	n := 0
	for _, e := range f.effects {
		if e.kind == kind {
			n++
		}
	}
	return n
}

// watchedRun runs seed's task over the log logOf makes of a memory log,
// with model m (nil: the task's own, recorded), recording every model
// and emit call with the entries the log held when it started.
func watchedRun(t *testing.T, seed uint64, idempotent bool, logOf func(mem *agent.MemoryLog, writes *int) agent.Log, m model.Model) (*agent.MemoryLog, *effects, []answer, error) {
	_, cfg, history := randomSetup(t, seed)
	mem := &agent.MemoryLog{}
	fx := &effects{outputs: &agent.MemoryOutputs{}}
	held := func() int { return len(mem.Entries()) }
	rec := &recorder{m: cfg.Model}
	if m == nil {
		m = rec
	}
	cfg.Model = watchedModel{m: m, at: func() { fx.add("model", held()) }}
	var ran atomic.Int64
	countEmit(cfg.Tools, idempotent, &ran, func() { fx.add("tool", held()) })
	cfg.Log = logOf(mem, &fx.writes)
	cfg.Outputs = fx.outputs
	err := drain(cfg, agent.Task{ID: "t", Input: "Do the task.", History: history}, nil)
	return mem, fx, rec.answers, err
}

// countEmit makes the emit tool idempotent or not and counts its runs,
// calling each of at first.
func countEmit(tools []*tool.Tool, idempotent bool, ran *atomic.Int64, at ...func()) {
	for _, tl := range tools {
		if tl.Name != "emit" {
			continue
		}
		tl.Idempotent = idempotent
		call := tl.Call
		tl.Call = func(ctx context.Context, args json.RawMessage) (string, error) {
			for _, f := range at {
				f()
			}
			ran.Add(1)
			return call(ctx, args)
		}
	}
}

// emitResults counts the results of the emit calls the run made in a log
// (not those of the task's earlier turns).
func emitResults(es []agent.LogEntry) int {
	n := 0
	for _, e := range es {
		var m struct {
			Role       string `json:"role"`
			ToolName   string `json:"tool_name"`
			ToolCallID string `json:"tool_call_id"`
		}
		if e.Kind == agent.KindMessage && json.Unmarshal(e.Payload, &m) == nil && m.Role == "tool" && m.ToolName == "emit" && m.ToolCallID[0] != 'h' {
			n++
		}
	}
	return n
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

type watchedModel struct {
	m  model.Model
	at func()
}

func (w watchedModel) Generate(ctx context.Context, req *model.Request) iter.Seq2[*model.Chunk, error] {
	w.at()
	return w.m.Generate(ctx, req)
}

func (w watchedModel) Resume(answered int) {
	if r, ok := w.m.(model.Resumable); ok {
		r.Resume(answered)
	}
}

// countingPlayback is a playback that keeps how many calls the log
// answered.
type countingPlayback struct {
	*playback
	answered int
}

func (c *countingPlayback) Resume(answered int) {
	c.answered = answered
	c.playback.Resume(answered)
}

// entryByEntry hides a memory log's batches: every entry is appended on
// its own.
type entryByEntry struct{ m *agent.MemoryLog }

func (l entryByEntry) Append(ctx context.Context, kind string, payload json.RawMessage) (int64, time.Time, error) {
	return l.m.Append(ctx, kind, payload)
}

// writeCounter counts a memory log's writes.
type writeCounter struct {
	*agent.MemoryLog
	writes *int
}

func (c writeCounter) Append(ctx context.Context, kind string, payload json.RawMessage) (int64, time.Time, error) {
	*c.writes++
	return c.MemoryLog.Append(ctx, kind, payload)
}

func (c writeCounter) AppendBatch(ctx context.Context, es []agent.LogEntry) ([]agent.LogEntry, error) {
	*c.writes++
	return c.MemoryLog.AppendBatch(ctx, es)
}

var errDied = errors.New("the process died")

// dyingLog takes left writes, then none: what a crash leaves.
type dyingLog struct {
	m    *agent.MemoryLog
	left int
}

func (d *dyingLog) Append(ctx context.Context, kind string, payload json.RawMessage) (int64, time.Time, error) {
	if d.left--; d.left < 0 {
		return 0, time.Time{}, errDied
	}
	return d.m.Append(ctx, kind, payload)
}

func (d *dyingLog) AppendBatch(ctx context.Context, es []agent.LogEntry) ([]agent.LogEntry, error) {
	if d.left--; d.left < 0 {
		return nil, errDied
	}
	return d.m.AppendBatch(ctx, es)
}
