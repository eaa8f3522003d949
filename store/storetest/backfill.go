package storetest

import (
	"encoding/json"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

// RevertTaskResults undoes migration 7 (task output, error code and
// usage columns) so that reopening the store runs it, and its backfill,
// again.
const RevertTaskResults = `ALTER TABLE tasks DROP COLUMN output; ALTER TABLE tasks DROP COLUMN error_code; ALTER TABLE tasks DROP COLUMN prompt_tokens; ALTER TABLE tasks DROP COLUMN completion_tokens; DELETE FROM schema_migrations WHERE version = 7`

// TaskResultsBackfill checks that migration 7 fills the new columns of
// tasks written before it from their logs: output from task.completed,
// usage from model calls and compaction summaries (each counted once),
// error codes from task.failed, cancelled for cancelled tasks, internal
// for a failure with no logged event. open opens the same database each
// time; revert runs RevertTaskResults on it while it is closed.
func TaskResultsBackfill(t *testing.T, open func(t *testing.T) store.Store, revert func(t *testing.T)) {
	s, ids := refilled(t, open, revert)
	defer s.Close()
	checkTaskResults(t, s, ids)
}

// refilled writes fillTaskResults' tasks, closes the store, reverts a
// migration and opens the store again, which runs it.
func refilled(t *testing.T, open func(t *testing.T) store.Store, revert func(t *testing.T)) (store.Store, []string) {
	s := open(t)
	ids := fillTaskResults(t, s)
	s.Close()
	revert(t)
	return open(t), ids
}

func fillTaskResults(t *testing.T, s store.Store) (ids []string) {
	t.Helper()
	ctx := t.Context()
	w, err := s.WorkspaceCreate(ctx, &store.WorkspaceCreateParams{Name: "w"})
	if err != nil {
		t.Fatal(err)
	}
	mk := func(st skilld.TaskStatus, msg string, entries ...string) string {
		task, err := s.TaskCreate(ctx, &store.TaskCreateParams{WorkspaceID: w.ID, Input: "x", Status: st})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			kind := "event"
			if e[2] == 'r' { // {"role"
				kind = "message"
			}
			if _, err := s.TaskLogAppend(ctx, &store.TaskLogAppendParams{TaskID: task.ID, Kind: kind, Payload: json.RawMessage(e)}); err != nil {
				t.Fatal(err)
			}
		}
		if msg != "" {
			s.TaskUpdate(ctx, &store.TaskUpdateParams{ID: task.ID, Error: &msg})
		}
		return task.ID
	}
	ids = append(ids, mk(skilld.TaskCompleted, "",
		`{"type":"task.started","seq":0,"time":"x"}`,
		`{"type":"llm.call.completed","usage":{"prompt_tokens":120,"completion_tokens":9},"iteration":1}`,
		`{"role":"assistant","content":"hi","usage":{"prompt_tokens":999,"completion_tokens":999}}`,
		`{"type":"context.compacted","usage":{"prompt_tokens":5,"completion_tokens":3},"asked":true,"summary":"s"}`,
		`{"type":"context.compacted","usage":{"prompt_tokens":0,"completion_tokens":0},"asked":false}`,
		`{"type":"llm.call.completed","usage":{"prompt_tokens":30,"completion_tokens":4}}`,
		`{"type":"task.completed","output":"The answer is 42.","iterations":2}`))
	ids = append(ids, mk(skilld.TaskFailed, "provider rate limit",
		`{"type":"llm.call.completed","usage":{"prompt_tokens":7,"completion_tokens":1}}`,
		`{"type":"task.failed","error":"provider rate limit","code":"rate_limited"}`))
	ids = append(ids, mk(skilld.TaskCancelled, "cancelled by ada"))
	ids = append(ids, mk(skilld.TaskFailed, "the task could not be started: x"))
	ids = append(ids, mk(skilld.TaskRunning, "",
		`{"type":"llm.call.completed","usage":{"prompt_tokens":50,"completion_tokens":5}}`))
	return ids
}

func checkTaskResults(t *testing.T, s store.Store, ids []string) {
	t.Helper()
	get := func(id string) *skilld.Task {
		task, err := s.TaskGet(t.Context(), &store.TaskGetParams{ID: id})
		if err != nil {
			t.Fatal(err)
		}
		return task
	}
	if c := get(ids[0]); c.Output != "The answer is 42." || c.Usage != (skilld.TaskUsage{PromptTokens: 155, CompletionTokens: 16, TotalTokens: 171}) || c.Error != nil {
		t.Errorf("completed %+v %+v", c, c.Usage)
	}
	if f := get(ids[1]); f.Error == nil || *f.Error != (skilld.TaskError{Code: "rate_limited", Message: "provider rate limit"}) || f.Usage.PromptTokens != 7 {
		t.Errorf("failed %+v %+v", f, f.Error)
	}
	if c := get(ids[2]); c.Error == nil || c.Error.Code != "cancelled" {
		t.Errorf("cancelled %+v", c.Error)
	}
	if f := get(ids[3]); f.Error == nil || f.Error.Code != "internal" || f.Usage != (skilld.TaskUsage{}) {
		t.Errorf("failed without event %+v", f.Error)
	}
	if r := get(ids[4]); r.Error != nil || r.Usage.TotalTokens != 55 || r.Output != "" {
		t.Errorf("running %+v", r)
	}
}

// RevertStorageUsage undoes migration 10 (what tasks keep, workspace
// storage quotas) so that reopening the store runs it, and its backfill,
// again.
const RevertStorageUsage = `ALTER TABLE tasks DROP COLUMN log_bytes; ALTER TABLE tasks DROP COLUMN output_bytes; ALTER TABLE task_outputs DROP COLUMN size; ALTER TABLE workspaces DROP COLUMN storage_quota; DELETE FROM schema_migrations WHERE version = 10`

// StorageUsageBackfill checks that migration 10 counts the log bytes of
// tasks written before it, each task's exactly as its entries read back.
// open and revert are TaskResultsBackfill's, reverting RevertStorageUsage.
func StorageUsageBackfill(t *testing.T, open func(t *testing.T) store.Store, revert func(t *testing.T)) {
	s, ids := refilled(t, open, revert)
	defer s.Close()
	for _, id := range ids {
		task, err := s.TaskGet(t.Context(), &store.TaskGetParams{ID: id})
		if err != nil {
			t.Fatal(err)
		}
		entries, err := s.TaskLogList(t.Context(), &store.TaskLogListParams{TaskID: id})
		if err != nil {
			t.Fatal(err)
		}
		var want int64
		for _, e := range entries {
			want += int64(len(e.Payload))
		}
		if task.Stored != (skilld.TaskStorage{LogBytes: want}) {
			t.Errorf("task %s of %d entries keeps %+v after the backfill, want %d log bytes", id, len(entries), task.Stored, want)
		}
	}
}
