package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/skilld/skilld/internal/outage"
)

// BatchLog is a Log that also appends several entries at once: all of
// them or none, numbered in order after what the log holds. A run whose
// log is one keeps the entries it writes between two side effects and
// appends them together just before the next side effect (see
// run.flush): one write per side effect instead of one per entry, and the
// log at every side effect exactly what it would be entry by entry.
type BatchLog interface {
	Log
	// AppendBatch appends entries' Kind and Payload and returns them
	// with their Seq and Time.
	AppendBatch(ctx context.Context, entries []LogEntry) ([]LogEntry, error)
}

// AppendBatch adds entries.
func (l *MemoryLog) AppendBatch(_ context.Context, entries []LogEntry) ([]LogEntry, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	at := time.Now().UTC()
	out := make([]LogEntry, len(entries))
	for i, e := range entries {
		out[i] = LogEntry{Seq: int64(len(l.entries)) + 1, Kind: e.Kind, Payload: append(json.RawMessage(nil), e.Payload...), Time: at}
		l.entries = append(l.entries, out[i])
	}
	return out, nil
}

// pendingEntry is an entry the run wrote that is not in the log yet, and
// the event to hand the consumer once it is (the consumer never sees an
// entry the log might lose).
type pendingEntry struct {
	LogEntry
	ev *Event
}

// logBuffer is what a run holds of its log: where the log is (the seq of
// its last entry, known once the run wrote one), and the entries written
// since the last side effect.
type logBuffer struct {
	last    int64
	placed  bool
	pending []pendingEntry
	// during counts the side effects under way: what a run writes while a
	// tool runs or a skill is placed (progress, store writes) is appended
	// at once, as it happens.
	during int
	// gone is set when the consumer stopped reading events.
	gone bool
}

// put writes an entry: into the batch when the log takes batches and the
// run knows where the log is, so that the entry's seq is known now;
// otherwise at once. ev, if not nil, is delivered once the entry is in the
// log, with its seq and time.
func (r *run) put(ctx context.Context, kind string, v any, ev *Event) (seq int64, ok bool) {
	payload, err := json.Marshal(v)
	if err != nil {
		r.fail(fmt.Errorf("appending to the task log: %w", err))
		return 0, false
	}
	// No secret's value reaches the log, whatever the entry.
	payload = r.secrets.redactJSON(payload)
	if _, batches := r.cfg.Log.(BatchLog); !batches || !r.buf.placed {
		seq, at, err := r.appendNow(ctx, kind, payload)
		if err != nil {
			r.fail(fmt.Errorf("appending to the task log: %w", err))
			return 0, false
		}
		r.buf.last, r.buf.placed = seq, true
		if ev != nil {
			ev.Seq, ev.Time = seq, at
			r.deliver(*ev)
		}
		return seq, true
	}
	seq = r.buf.last + int64(len(r.buf.pending)) + 1
	r.buf.pending = append(r.buf.pending, pendingEntry{LogEntry: LogEntry{Seq: seq, Kind: kind, Payload: payload}, ev: ev})
	if r.buf.during > 0 {
		return seq, r.flush(ctx)
	}
	return seq, true
}

// appendNow appends one entry. A log entry that cannot be written ends the
// run, so a short storage outage is waited out rather than lose the task.
func (r *run) appendNow(ctx context.Context, kind string, payload json.RawMessage) (seq int64, at time.Time, err error) {
	err = outage.WaitOut(context.WithoutCancel(ctx), r.cfg.StorageRetry, "the task log", func(ctx context.Context) (err error) {
		seq, at, err = r.cfg.Log.Append(ctx, kind, payload)
		return err
	})
	return seq, at, err
}

// flush appends the pending entries in one batch and delivers their
// events. It runs before every side effect (gate, effect) and at the
// run's end, so that whatever the run did before a side effect is in the
// log before the side effect starts: a run stopped at any point resumes
// from a log that holds everything up to the side effect under way, as if
// every entry had been appended on its own. It reports false when the log
// failed (the run has failed then).
func (r *run) flush(ctx context.Context) bool {
	if len(r.buf.pending) == 0 {
		return true
	}
	batch := make([]LogEntry, len(r.buf.pending))
	for i, p := range r.buf.pending {
		batch[i] = p.LogEntry
	}
	pending := r.buf.pending
	r.buf.pending = nil
	var got []LogEntry
	err := outage.WaitOut(context.WithoutCancel(ctx), r.cfg.StorageRetry, "the task log", func(ctx context.Context) (err error) {
		got, err = r.cfg.Log.(BatchLog).AppendBatch(ctx, batch)
		return err
	})
	if err == nil && (len(got) != len(batch) || got[0].Seq != batch[0].Seq || got[len(got)-1].Seq != batch[len(batch)-1].Seq) {
		err = fmt.Errorf("the log numbered %d entries from %d, where the run expected %d from %d: something else writes to it", len(got), firstSeq(got), len(batch), batch[0].Seq)
	}
	if err != nil {
		r.fail(fmt.Errorf("appending to the task log: %w", err))
		return false
	}
	r.buf.last = got[len(got)-1].Seq
	for i, p := range pending {
		if p.ev != nil {
			p.ev.Seq, p.ev.Time = got[i].Seq, got[i].Time
			r.deliver(*p.ev)
		}
	}
	return true
}

func firstSeq(es []LogEntry) int64 {
	if len(es) == 0 {
		return 0
	}
	return es[0].Seq
}

// effect runs a side effect the gate does not see (placing an activated
// skill's files, which the user's /name invocation does outside any tool
// call), or a tool call: the pending entries go to the log first, and what
// the run writes while it runs is appended as it happens. It reports
// false, without running fn, when the run stopped (its log failed).
func (r *run) effect(ctx context.Context, fn func()) bool {
	if !r.flush(ctx) || r.stopped {
		return false
	}
	r.buf.during++
	defer func() { r.buf.during-- }()
	fn()
	return true
}
