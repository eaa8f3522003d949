package executor

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sync"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/blob"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store"
)

// taskLog is the store's task log as the runtime's Log, for the task's one
// run: each append expects the next sequence number, so a run that lost
// the task to another (a worker cut off while its replacement took over)
// is refused (store.ErrLogMoved) instead of writing into the other's log,
// and an append whose commit went unacknowledged is retried without being
// written twice.
type taskLog struct {
	db     service.TaskRecords
	taskID string
	budget *outputBudget
	mu     sync.Mutex
	next   int64
}

func (g *taskLog) Append(ctx context.Context, kind string, payload json.RawMessage) (int64, time.Time, error) {
	es, err := g.AppendBatch(ctx, []agent.LogEntry{{Kind: kind, Payload: payload}})
	if err != nil {
		return 0, time.Time{}, err
	}
	return es[0].Seq, es[0].Time, nil
}

// AppendBatch appends a run's entries in one transaction, as Append does
// one: expecting the log where the run left it, and taking the batch as
// ours when its commit went unacknowledged and the log holds it.
func (g *taskLog) AppendBatch(ctx context.Context, entries []agent.LogEntry) ([]agent.LogEntry, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	p := &store.TaskLogAppendBatchParams{TaskID: g.taskID, ExpectSeq: g.next, Entries: make([]store.TaskLogBatchEntry, len(entries))}
	size := int64(0)
	for i, e := range entries {
		u := callUsage(e.Kind, e.Payload)
		p.Entries[i] = store.TaskLogBatchEntry{Kind: e.Kind, Payload: e.Payload, PromptTokens: int64(u.PromptTokens), CompletionTokens: int64(u.CompletionTokens)}
		size += int64(len(e.Payload))
	}
	got, err := g.db.TaskLogAppendBatch(ctx, p)
	if errors.Is(err, store.ErrLogMoved) {
		// Ours, if an earlier attempt committed it unacknowledged.
		if there, lerr := g.db.TaskLogList(ctx, &store.TaskLogListParams{TaskID: g.taskID, AfterSeq: g.next - 1, Limit: len(entries)}); lerr == nil && same(there, entries, g.next) {
			got, err = there, nil
		}
	}
	if err != nil {
		return nil, err
	}
	out := make([]agent.LogEntry, len(got))
	for i, e := range got {
		out[i] = agent.LogEntry{Seq: e.Seq, Kind: e.Kind, Payload: entries[i].Payload, Time: e.CreatedAt}
	}
	g.next = got[len(got)-1].Seq + 1
	g.budget.count(size)
	return out, nil
}

// same reports whether the log entries there, from seq first, are the
// entries a run appends.
func same(there []*skilld.TaskLogEntry, entries []agent.LogEntry, first int64) bool {
	if len(there) != len(entries) {
		return false
	}
	for i, e := range there {
		if e.Seq != first+int64(i) || e.Kind != entries[i].Kind || !sameJSON(e.Payload, entries[i].Payload) {
			return false
		}
	}
	return true
}

var _ agent.BatchLog = (*taskLog)(nil)

// callUsage is the usage of the model call a log entry records: the
// llm.call.completed event of a turn, or the context.compacted event of a
// compaction that asked for a summary; zero for any other entry. Counting
// the events, not the assistant messages, counts a compaction's call too,
// and each call once.
func callUsage(kind string, payload json.RawMessage) model.Usage {
	if kind != agent.KindEvent {
		return model.Usage{}
	}
	var ev struct {
		Type  string       `json:"type"`
		Usage *model.Usage `json:"usage"`
	}
	if json.Unmarshal(payload, &ev) != nil || ev.Usage == nil {
		return model.Usage{}
	}
	switch ev.Type {
	case agent.EventLLMCallCompleted, agent.EventContextCompacted:
		// A provider's nonsense must not fail the append, which the store
		// refuses with negative counts.
		return model.Usage{PromptTokens: max(ev.Usage.PromptTokens, 0), CompletionTokens: max(ev.Usage.CompletionTokens, 0)}
	}
	return model.Usage{}
}

// sameJSON compares two JSON documents by value (PostgreSQL's jsonb does
// not keep the bytes).
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// taskOutputs keeps a task's large tool outputs in the blob store and
// records each as the task's, so that read_tool_output of one task opens
// only its own outputs (a digest alone opens nothing), and so that the
// blobs count as referenced while the task exists.
type taskOutputs struct {
	blobs  blob.Store
	db     service.TaskRecords
	taskID string
	budget *outputBudget
}

// Put stores the output, records it, and then makes sure its blob is still
// there: the same bytes may have been another task's output, removed with
// that task after this Put found them stored and before the record
// committed (the record waits out such a removal, so a check after it
// sees what the removal did).
func (o taskOutputs) Put(ctx context.Context, text string) (string, error) {
	if err := o.budget.take(int64(len(text))); err != nil {
		return "", err
	}
	outputs := agent.BlobOutputs{Blobs: o.blobs}
	id, err := outputs.Put(ctx, text)
	if err != nil {
		return "", err
	}
	if err := o.db.TaskOutputAdd(ctx, &store.TaskOutputParams{TaskID: o.taskID, Digest: id, Size: int64(len(text))}); err != nil {
		return "", err
	}
	_, err = o.blobs.Stat(ctx, id)
	if errors.Is(err, blob.ErrNotFound) {
		_, err = outputs.Put(ctx, text)
	}
	if err != nil {
		return "", err
	}
	return id, nil
}

func (o taskOutputs) Get(ctx context.Context, id string) (string, error) {
	ok, err := o.db.TaskOutputExists(ctx, &store.TaskOutputParams{TaskID: o.taskID, Digest: id})
	if err != nil {
		return "", err
	}
	if !ok {
		return "", skilld.Errorf(skilld.ENOTFOUND, "no stored output %q in this task", id)
	}
	return agent.BlobOutputs{Blobs: o.blobs}.Get(ctx, id)
}

// approver pauses a task until someone decides through the API. While it
// waits the task gives its place in the pool up, so tasks waiting for
// people do not hold back the others; it gets it back, ahead of the queue,
// to go on.
type approver struct{ l *Local }

func (a approver) Approve(ctx context.Context, req agent.ApprovalRequest) (bool, error) {
	ch := make(chan bool, 1)
	a.l.mu.Lock()
	r := a.l.running[req.TaskID]
	if r != nil {
		r.pending[req.CallID] = ch
	}
	a.l.mu.Unlock()
	if r == nil {
		return false, errors.New("the task is not running here")
	}
	db := a.l.cfg.DB
	if _, err := db.TaskUpdate(ctx, &store.TaskUpdateParams{ID: req.TaskID, Status: skilld.TaskWaitingForApproval}); err != nil {
		return false, err
	}
	a.l.notify(req.TaskID)
	if r.held != nil {
		a.l.leave(r.held)
	}
	var ok bool
	select {
	case ok = <-ch:
	case <-ctx.Done():
		return false, ctx.Err()
	}
	if r.held != nil {
		if err := a.l.rejoin(ctx, r.held); err != nil {
			return false, err
		}
	}
	if _, err := db.TaskUpdate(context.WithoutCancel(ctx), &store.TaskUpdateParams{ID: req.TaskID, Status: skilld.TaskRunning}); err != nil {
		return false, err
	}
	return ok, nil
}
