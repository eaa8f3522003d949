package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
)

// recorder passes calls to a model and keeps each answer, in order.
type recorder struct {
	m       model.Model
	answers []answer
}

type answer struct {
	resp *model.Response
	err  error
}

func (r *recorder) Generate(ctx context.Context, req *model.Request) iter.Seq2[*model.Chunk, error] {
	return func(yield func(*model.Chunk, error) bool) {
		resp, err := model.Collect(ctx, r.m, req)
		r.answers = append(r.answers, answer{resp, err})
		if err != nil {
			yield(nil, err)
			return
		}
		yield(&model.Chunk{Response: resp}, nil)
	}
}

// playback answers with recorded answers, in order: the same model for a
// resumed run (it is Resumable, so it skips what the log answered).
type playback struct {
	mu      sync.Mutex
	answers []answer
	next    int
}

func (p *playback) Resume(answered int) { p.mu.Lock(); p.next += answered; p.mu.Unlock() }

func (p *playback) Generate(_ context.Context, _ *model.Request) iter.Seq2[*model.Chunk, error] {
	return func(yield func(*model.Chunk, error) bool) {
		p.mu.Lock()
		n := p.next
		p.next++
		p.mu.Unlock()
		if n >= len(p.answers) {
			yield(nil, skilld.Errorf(skilld.EINVALID, "playback: call %d, but only %d were recorded", n+1, len(p.answers)))
			return
		}
		a := p.answers[n]
		if a.err != nil {
			yield(nil, a.err)
			return
		}
		yield(&model.Chunk{Response: a.resp}, nil)
	}
}

// TestResumeAnywhere runs random tasks (the context-invariant generator:
// activations, Go skills with state, compaction, both placements), then
// stops each one after every k-th entry of its log and resumes it from
// there. A resumed run must write exactly the log the uninterrupted run
// wrote, entry for entry and byte for byte, apart from the task.resumed
// marker — which proves the state it rebuilt is the state it had — and
// must call the model only for the answers the log did not hold.
// SKILLD_RESUME_TASKS sets how many tasks (default 300); SKILLD_RESUME_SEED
// replays one.
func TestResumeAnywhere(t *testing.T) { resumeSeeds(t, 300, resumeEverywhere) }

// resumeSeeds runs check on n random tasks, in parallel chunks, each of
// which stops after a few failures. SKILLD_RESUME_TASKS sets how many
// tasks instead; SKILLD_RESUME_SEED replays one.
func resumeSeeds(t *testing.T, n int, check func(t *testing.T, seed uint64) error) {
	if v, err := strconv.Atoi(os.Getenv("SKILLD_RESUME_TASKS")); err == nil {
		n = v
	}
	first := uint64(1)
	if v, err := strconv.ParseUint(os.Getenv("SKILLD_RESUME_SEED"), 10, 64); err == nil {
		first, n = v, 1
	}
	const chunks = 4
	for c := range uint64(chunks) {
		t.Run(fmt.Sprint("chunk", c), func(t *testing.T) {
			t.Parallel()
			failed := 0
			for seed := first + c; seed < first+uint64(n) && failed < 3; seed += chunks {
				if err := check(t, seed); err != nil {
					failed++
					t.Errorf("seed %d (replay with SKILLD_RESUME_SEED=%d): %v", seed, seed, err)
				}
			}
		})
	}
}

func resumeEverywhere(t *testing.T, seed uint64) error {
	p, cfg, history := randomSetup(t, seed)
	rec := &recorder{m: cfg.Model}
	outputs := &agent.MemoryOutputs{} // outlives a restart, as the blob store does
	cfg.Model, cfg.Outputs = rec, outputs
	for _, tl := range cfg.Tools {
		tl.Idempotent = true // emit: in flight at the stop, it runs again
	}
	full := &agent.MemoryLog{}
	cfg.Log = full
	task := agent.Task{ID: "t", Input: "Do the task.", History: history}
	// The first run is followed as the invariant test follows it: its
	// model checks each request against what the events said.
	if err := drain(cfg, task, p.observe); err != nil {
		return fmt.Errorf("first run: %w", err)
	}
	if p.err != nil {
		return nil // the invariant test reports these
	}
	want := full.Entries()
	rng := rand.New(rand.NewPCG(seed, 42))
	cuts := []int{1, len(want) - 1}
	for range 6 {
		cuts = append(cuts, 1+rng.IntN(len(want)-1))
	}
	for _, k := range cuts {
		_, rcfg, _ := randomSetup(t, seed) // fresh skills and Go skill state
		for _, tl := range rcfg.Tools {
			tl.Idempotent = true
		}
		pb := &playback{answers: rec.answers}
		log := agent.NewMemoryLog(want[:k])
		rcfg.Model, rcfg.Outputs, rcfg.Log = pb, outputs, log
		resumed := task
		resumed.Resume = want[:k]
		if err := drain(rcfg, resumed, nil); err != nil {
			return fmt.Errorf("resumed after entry %d: %w", k, err)
		}
		got := normalized(log.Entries())
		if err := sameLog(got, normalized(want)); err != nil {
			return fmt.Errorf("resumed after entry %d of %d: %w", k, len(want), err)
		}
		if pb.next != len(rec.answers) {
			return fmt.Errorf("resumed after entry %d: the model was asked %d times in all, the first run %d", k, pb.next, len(rec.answers))
		}
	}
	return nil
}

func drain(cfg agent.Config, task agent.Task, observe func(agent.Event)) error {
	a, err := agent.New(cfg)
	if err != nil {
		return err
	}
	for ev, err := range a.Run(context.Background(), task) {
		if err != nil {
			return err
		}
		if observe != nil {
			observe(ev)
		}
	}
	return nil
}

func withoutMarkers(es []agent.LogEntry) []agent.LogEntry {
	var out []agent.LogEntry
	for _, e := range es {
		if e.Kind == agent.KindEvent && bytes.Contains(e.Payload, []byte(`"type":"`+agent.EventTaskResumed+`"`)) {
			continue
		}
		out = append(out, e)
	}
	return out
}

// normalized is a log without its task.resumed markers, with the log
// seqs an llm.call.started event's context names (the messages it left
// out) numbered as if the markers were not there: a resumed log's live
// part is one entry further on per marker, and the seqs it records are
// right for it.
func normalized(es []agent.LogEntry) []agent.LogEntry {
	var markers []int64
	for _, e := range es {
		if e.Kind == agent.KindEvent && bytes.Contains(e.Payload, []byte(`"type":"`+agent.EventTaskResumed+`"`)) {
			markers = append(markers, e.Seq)
		}
	}
	shift := func(seq int64) int64 {
		n := int64(0)
		for _, m := range markers {
			if m < seq {
				n++
			}
		}
		return seq - n
	}
	out := withoutMarkers(es)
	for i, e := range out {
		if e.Kind != agent.KindEvent || !bytes.Contains(e.Payload, []byte(`"type":"`+agent.EventLLMCallStarted+`"`)) {
			continue
		}
		var ev struct {
			Context agent.RequestContext `json:"context"`
		}
		var all map[string]json.RawMessage
		if json.Unmarshal(e.Payload, &ev) != nil || json.Unmarshal(e.Payload, &all) != nil {
			continue
		}
		for j, r := range ev.Context.Messages.LeftOutSeqs {
			ev.Context.Messages.LeftOutSeqs[j] = [2]int64{shift(r[0]), shift(r[1])}
		}
		all["context"], _ = json.Marshal(ev.Context)
		e.Payload, _ = json.Marshal(all)
		out[i] = e
	}
	return out
}

func sameLog(got, want []agent.LogEntry) error {
	for i := range max(len(got), len(want)) {
		switch {
		case i >= len(got):
			return fmt.Errorf("the resumed log ends at %d entries; the first run's goes on with %s %s", len(got), want[i].Kind, want[i].Payload)
		case i >= len(want):
			return fmt.Errorf("the resumed log has more than %d entries: %s %s", len(want), got[i].Kind, got[i].Payload)
		case got[i].Kind != want[i].Kind || !bytes.Equal(got[i].Payload, want[i].Payload):
			return fmt.Errorf("entry %d differs:\n got %s %.300s\nwant %s %.300s", i+1, got[i].Kind, got[i].Payload, want[i].Kind, want[i].Payload)
		}
	}
	return nil
}
