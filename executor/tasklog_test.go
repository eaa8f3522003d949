package executor

import (
	"encoding/json"
	"errors"
	"testing"

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
			got, _ := db.TaskLogList(t.Context(), &store.TaskLogListParams{TaskID: task.ID})
			if len(got) != 2 {
				t.Errorf("%d entries, want 2", len(got))
			}
		})
	}
}
