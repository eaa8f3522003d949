package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

// testTaskLogBatch: a batch is appended whole, in order, after what is
// there, with the usage and bytes of all its entries; a refused batch
// (fenced, invalid, of a missing task) writes none of its entries and
// changes no total.
func testTaskLogBatch(t *testing.T, open Opener) {
	s := open(t)
	ws := newWorkspace(t, s, "w")
	task := must[*skilld.Task](t)(s.TaskCreate(ctx(t), &store.TaskCreateParams{WorkspaceID: ws.ID, Input: "x"}))
	entry := func(kind string, n, prompt, completion int64) store.TaskLogBatchEntry {
		return store.TaskLogBatchEntry{Kind: kind, Payload: json.RawMessage(fmt.Sprintf(`{"n":%d}`, n)), PromptTokens: prompt, CompletionTokens: completion}
	}
	first := must[[]*skilld.TaskLogEntry](t)(s.TaskLogAppendBatch(ctx(t), &store.TaskLogAppendBatchParams{TaskID: task.ID, ExpectSeq: 1,
		Entries: []store.TaskLogBatchEntry{entry("message", 1, 0, 0), entry("event", 2, 100, 7), entry("event", 3, 0, 0)}}))
	if len(first) != 3 {
		t.Fatalf("a batch of 3 returned %d entries", len(first))
	}
	for i, e := range first {
		if e.Seq != int64(i+1) || e.TaskID != task.ID || !sameJSON(e.Payload, fmt.Sprintf(`{"n":%d}`, i+1)) || e.CreatedAt.IsZero() {
			t.Errorf("entry %d of the batch: %+v %s", i, e, e.Payload)
		}
	}
	if first[0].Kind != "message" || first[1].Kind != "event" {
		t.Errorf("kinds %q, %q", first[0].Kind, first[1].Kind)
	}
	// A single append and a batch go on from each other.
	must[*skilld.TaskLogEntry](t)(s.TaskLogAppend(ctx(t), &store.TaskLogAppendParams{TaskID: task.ID, Kind: "event", Payload: json.RawMessage(`{"n":4}`), ExpectSeq: 4}))
	second := must[[]*skilld.TaskLogEntry](t)(s.TaskLogAppendBatch(ctx(t), &store.TaskLogAppendBatchParams{TaskID: task.ID,
		Entries: []store.TaskLogBatchEntry{entry("message", 5, 0, 0), entry("event", 6, 20, 3)}}))
	if len(second) != 2 || second[0].Seq != 5 || second[1].Seq != 6 {
		t.Fatalf("a batch after entry 4: %+v", second)
	}
	before := must[*skilld.Task](t)(s.TaskGet(ctx(t), &store.TaskGetParams{ID: task.ID}))
	wantUsage := skilld.TaskUsage{PromptTokens: 120, CompletionTokens: 10, TotalTokens: 130}
	if before.LastSeq != 6 || before.Usage != wantUsage || before.Stored.LogBytes < 6*int64(len(`{"n":1}`)) {
		t.Errorf("after two batches: entry %d, usage %+v, %d log bytes", before.LastSeq, before.Usage, before.Stored.LogBytes)
	}

	// Refused batches leave the log and the totals as they were.
	_, err := s.TaskLogAppendBatch(ctx(t), &store.TaskLogAppendBatchParams{TaskID: task.ID, ExpectSeq: 6,
		Entries: []store.TaskLogBatchEntry{entry("event", 7, 1000, 0), entry("event", 8, 0, 0)}})
	if wantCode(t, err, skilld.ECONFLICT); !errors.Is(err, store.ErrLogMoved) {
		t.Errorf("a stale batch: %v", err)
	}
	_, err = s.TaskLogAppendBatch(ctx(t), &store.TaskLogAppendBatchParams{TaskID: task.ID,
		Entries: []store.TaskLogBatchEntry{entry("event", 7, 1000, 0), entry("event", 8, 0, -1)}})
	wantCode(t, err, skilld.EINVALID)
	_, err = s.TaskLogAppendBatch(ctx(t), &store.TaskLogAppendBatchParams{TaskID: task.ID})
	wantCode(t, err, skilld.EINVALID)
	_, err = s.TaskLogAppendBatch(ctx(t), &store.TaskLogAppendBatchParams{TaskID: "missing", Entries: []store.TaskLogBatchEntry{entry("event", 1, 0, 0)}})
	wantCode(t, err, skilld.ENOTFOUND)
	_, err = s.TaskLogAppendBatch(ctx(t), &store.TaskLogAppendBatchParams{TaskID: "missing", ExpectSeq: 1, Entries: []store.TaskLogBatchEntry{entry("event", 1, 0, 0)}})
	wantCode(t, err, skilld.ENOTFOUND)
	after := must[*skilld.Task](t)(s.TaskGet(ctx(t), &store.TaskGetParams{ID: task.ID}))
	if after.LastSeq != before.LastSeq || after.Usage != before.Usage || after.Stored != before.Stored {
		t.Errorf("refused batches changed the task: %+v, was %+v", after, before)
	}
	log := must[[]*skilld.TaskLogEntry](t)(s.TaskLogList(ctx(t), &store.TaskLogListParams{TaskID: task.ID}))
	if len(log) != 6 {
		t.Errorf("refused batches left %d entries, want 6", len(log))
	}
	t.Run("Concurrent", func(t *testing.T) { testConcurrentTaskLogBatches(t, open) })
}

// testConcurrentTaskLogBatches has appenders write batches of different
// sizes to one task's log at once: the sequence has no gaps, and each
// batch's entries are together, in order.
func testConcurrentTaskLogBatches(t *testing.T, open Opener) {
	s := open(t)
	ws := newWorkspace(t, s, "w")
	task := must[*skilld.Task](t)(s.TaskCreate(ctx(t), &store.TaskCreateParams{WorkspaceID: ws.ID, Input: "x"}))
	const appenders, each = 6, 10
	total := 0
	for a := range appenders {
		total += each * (a%3 + 1)
	}
	concurrently(t, appenders, each, func(a, i int) error {
		batch := make([]store.TaskLogBatchEntry, a%3+1)
		for j := range batch {
			batch[j] = store.TaskLogBatchEntry{Kind: "event", Payload: json.RawMessage(fmt.Sprintf(`{"a":%d,"i":%d,"j":%d}`, a, i, j))}
		}
		_, err := s.TaskLogAppendBatch(ctx(t), &store.TaskLogAppendBatchParams{TaskID: task.ID, Entries: batch})
		return err
	})
	log := must[[]*skilld.TaskLogEntry](t)(s.TaskLogList(ctx(t), &store.TaskLogListParams{TaskID: task.ID}))
	if len(log) != total {
		t.Fatalf("%d entries, want %d", len(log), total)
	}
	type pos struct{ A, I, J int }
	for k := 0; k < len(log); {
		if log[k].Seq != int64(k+1) {
			t.Fatalf("entry %d has seq %d", k, log[k].Seq)
		}
		var p pos
		if err := json.Unmarshal(log[k].Payload, &p); err != nil || p.J != 0 {
			t.Fatalf("entry %d (%s) does not start a batch", k+1, log[k].Payload)
		}
		for j := range p.A%3 + 1 {
			var q pos
			if err := json.Unmarshal(log[k+j].Payload, &q); err != nil || q != (pos{p.A, p.I, j}) {
				t.Fatalf("entry %d is %s, want entry %d of the batch %+v", k+j+1, log[k+j].Payload, j, p)
			}
		}
		k += p.A%3 + 1
	}
}

// sameJSON compares a stored payload with want by value (PostgreSQL's
// jsonb does not keep the bytes).
func sameJSON(got json.RawMessage, want string) bool {
	var a, b any
	return json.Unmarshal(got, &a) == nil && json.Unmarshal([]byte(want), &b) == nil && fmt.Sprint(a) == fmt.Sprint(b)
}
