package executor

import (
	"context"
	"strings"
	"testing"

	"github.com/skilld/skilld/blob"
	"github.com/skilld/skilld/blob/fsblob"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/storetest"
)

// removedBeforeRecord is a task store under which the output's blob is
// removed just before the output is recorded, as deleting another task
// that had stored the same bytes does when it comes in between.
type removedBeforeRecord struct {
	service.TaskRecords
	blobs blob.Store
}

func (r removedBeforeRecord) TaskOutputAdd(ctx context.Context, p *store.TaskOutputParams) error {
	if err := r.blobs.Delete(ctx, p.Digest); err != nil {
		return err
	}
	return r.TaskRecords.TaskOutputAdd(ctx, p)
}

// TestOutputStoredAgain: an output whose blob went between storing and
// recording it is stored again, so a recorded output always has its blob.
func TestOutputStoredAgain(t *testing.T) {
	db := storetest.OpenSQLite(t)
	blobs, err := fsblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, _ := db.WorkspaceCreate(t.Context(), &store.WorkspaceCreateParams{Name: "w"})
	task, err := db.TaskCreate(t.Context(), &store.TaskCreateParams{WorkspaceID: ws.ID, Input: "x"})
	if err != nil {
		t.Fatal(err)
	}
	o := taskOutputs{blobs: blobs, db: removedBeforeRecord{TaskRecords: db, blobs: blobs}, taskID: task.ID}
	text := strings.Repeat("a long output\n", 2000)
	id, err := o.Put(t.Context(), text)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := o.Get(t.Context(), id); err != nil || got != text {
		t.Fatalf("reading the output back: %d bytes, %v", len(got), err)
	}
}
