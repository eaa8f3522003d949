package executor

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/storetest"
)

// taskLog fences a run that lost its task, and an append retried after an
// unacknowledged commit is not written twice.
func TestTaskLogFencing(t *testing.T) {
	for _, d := range storetest.Drivers(t) {
		t.Run(d.Name, func(t *testing.T) {
			db := d.Open(t)
			ws, _ := db.WorkspaceCreate(t.Context(), &store.WorkspaceCreateParams{Name: "w"})
			task, err := db.TaskCreate(t.Context(), &store.TaskCreateParams{WorkspaceID: ws.ID, Input: "x"})
			if err != nil {
				t.Fatal(err)
			}
			old := &taskLog{db: db, taskID: task.ID, next: 1}
			if seq, _, err := old.Append(t.Context(), "event", json.RawMessage(`{"n":1}`)); err != nil || seq != 1 {
				t.Fatalf("first append: %d %v", seq, err)
			}
			// A replacement run resumes from the log and writes on.
			taken := &taskLog{db: db, taskID: task.ID, next: 2}
			if seq, _, err := taken.Append(t.Context(), "event", json.RawMessage(`{"n":2}`)); err != nil || seq != 2 {
				t.Fatalf("replacement's append: %d %v", seq, err)
			}
			if _, _, err := old.Append(t.Context(), "event", json.RawMessage(`{"n":"stale"}`)); !errors.Is(err, store.ErrLogMoved) {
				t.Errorf("the old run's append: %v; want it fenced", err)
			}
			// The same append again, as after a commit whose answer was lost.
			taken.next = 2
			if seq, _, err := taken.Append(t.Context(), "event", json.RawMessage(`{"n": 2}`)); err != nil || seq != 2 {
				t.Errorf("retried append: %d %v; want the committed entry", seq, err)
			}
			// A batch likewise: fenced when stale, taken as committed when
			// the log holds it, refused when the log holds something else.
			batch := []agent.LogEntry{{Kind: "message", Payload: json.RawMessage(`{"n":3}`)}, {Kind: "event", Payload: json.RawMessage(`{"n":4}`)}}
			if es, err := taken.AppendBatch(t.Context(), batch); err != nil || len(es) != 2 || es[0].Seq != 3 || es[1].Seq != 4 {
				t.Fatalf("batch: %+v %v", es, err)
			}
			if _, err := old.AppendBatch(t.Context(), batch); !errors.Is(err, store.ErrLogMoved) {
				t.Errorf("the old run's batch: %v; want it fenced", err)
			}
			taken.next = 3
			if es, err := taken.AppendBatch(t.Context(), batch); err != nil || len(es) != 2 || es[1].Seq != 4 || taken.next != 5 {
				t.Errorf("retried batch: %+v %v; want the committed entries", es, err)
			}
			taken.next = 3
			other := []agent.LogEntry{batch[0], {Kind: "event", Payload: json.RawMessage(`{"n":"other"}`)}}
			if _, err := taken.AppendBatch(t.Context(), other); !errors.Is(err, store.ErrLogMoved) {
				t.Errorf("a batch the log does not hold: %v; want it fenced", err)
			}
			got, _ := db.TaskLogList(t.Context(), &store.TaskLogListParams{TaskID: task.ID})
			if len(got) != 4 {
				t.Errorf("%d entries, want 4", len(got))
			}
		})
	}
}
