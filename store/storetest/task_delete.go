package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

// testTaskDelete: a finished task goes whole — row, log, outputs and
// package pins — and the deletion names what those referred to; an
// unfinished one is refused and left as it was; another workspace's task
// and a task deleted already are not found.
func testTaskDelete(t *testing.T, open Opener) {
	s := open(t)
	ws := newWorkspace(t, s, "w")
	other := newWorkspace(t, s, "other")
	pkg := newPackage(t, s, "pinned")
	task := must[*skilld.Task](t)(s.TaskCreate(ctx(t), &store.TaskCreateParams{WorkspaceID: ws.ID, Input: "x", Packages: []string{pkg}}))
	for i := range 3 {
		must[*skilld.TaskLogEntry](t)(s.TaskLogAppend(ctx(t), &store.TaskLogAppendParams{TaskID: task.ID, Kind: "event", Payload: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))}))
	}
	outs := []string{fmt.Sprintf("sha256:%064d", 2), fmt.Sprintf("sha256:%064d", 1)}
	for _, d := range outs {
		if err := s.TaskOutputAdd(ctx(t), &store.TaskOutputParams{TaskID: task.ID, Digest: d}); err != nil {
			t.Fatal(err)
		}
	}
	keep := must[*skilld.Task](t)(s.TaskCreate(ctx(t), &store.TaskCreateParams{WorkspaceID: ws.ID, Input: "kept"}))
	if err := s.TaskOutputAdd(ctx(t), &store.TaskOutputParams{TaskID: keep.ID, Digest: outs[0]}); err != nil {
		t.Fatal(err)
	}

	for _, st := range []skilld.TaskStatus{skilld.TaskQueued, skilld.TaskRunning, skilld.TaskWaitingForApproval} {
		must[*skilld.Task](t)(s.TaskUpdate(ctx(t), &store.TaskUpdateParams{ID: task.ID, Status: st}))
		_, err := s.TaskDelete(ctx(t), &store.TaskDeleteParams{WorkspaceID: ws.ID, ID: task.ID})
		if wantCode(t, err, skilld.ECONFLICT); !errors.Is(err, store.ErrTaskNotFinished) {
			t.Errorf("deleting a %s task: %v", st, err)
		}
	}
	if got := must[[]*skilld.TaskLogEntry](t)(s.TaskLogList(ctx(t), &store.TaskLogListParams{TaskID: task.ID})); len(got) != 3 {
		t.Fatalf("a refused delete left %d log entries of 3", len(got))
	}
	finished := time.Now().UTC()
	must[*skilld.Task](t)(s.TaskUpdate(ctx(t), &store.TaskUpdateParams{ID: task.ID, Status: skilld.TaskCompleted, FinishedAt: &finished}))
	_, err := s.TaskDelete(ctx(t), &store.TaskDeleteParams{WorkspaceID: other.ID, ID: task.ID})
	wantCode(t, err, skilld.ENOTFOUND)

	res := must[*store.TaskDeleteResult](t)(s.TaskDelete(ctx(t), &store.TaskDeleteParams{WorkspaceID: ws.ID, ID: task.ID}))
	if want := []string{outs[1], outs[0]}; !slices.Equal(res.Outputs, want) || !slices.Equal(res.Packages, []string{pkg}) {
		t.Errorf("deleted task referred to outputs %v and packages %v, want %v and [%s]", res.Outputs, res.Packages, want, pkg)
	}
	_, err = s.TaskGet(ctx(t), &store.TaskGetParams{ID: task.ID})
	wantCode(t, err, skilld.ENOTFOUND)
	if got := must[[]*skilld.TaskLogEntry](t)(s.TaskLogList(ctx(t), &store.TaskLogListParams{TaskID: task.ID})); len(got) != 0 {
		t.Errorf("the deleted task's log has %d entries", len(got))
	}
	if ok := must[bool](t)(s.TaskOutputExists(ctx(t), &store.TaskOutputParams{TaskID: task.ID, Digest: outs[1]})); ok {
		t.Error("the deleted task's output is still recorded")
	}
	// What the deleted task alone referred to is unreferenced now; what
	// another task refers to is not.
	used := must[map[string]bool](t)(s.BlobReferenced(ctx(t), &store.BlobReferencedParams{Digests: outs}))
	if !used[outs[0]] || used[outs[1]] {
		t.Errorf("blob references after the delete: %v (want only %s)", used, outs[0])
	}
	if used := must[map[string]bool](t)(s.PackageReferenced(ctx(t), &store.PackageReferencedParams{Digests: []string{pkg}})); used[pkg] {
		t.Error("the deleted task still pins its package")
	}
	_, err = s.TaskDelete(ctx(t), &store.TaskDeleteParams{WorkspaceID: ws.ID, ID: task.ID})
	wantCode(t, err, skilld.ENOTFOUND)
	if _, total, _ := s.TaskList(ctx(t), &store.TaskListParams{WorkspaceID: ws.ID}); total != 1 {
		t.Errorf("%d tasks left, want 1", total)
	}
}

// testTaskListFinished: a workspace's tasks that finished before a time,
// oldest first, never an unfinished one or another workspace's.
func testTaskListFinished(t *testing.T, open Opener) {
	s := open(t)
	ws := newWorkspace(t, s, "w")
	other := newWorkspace(t, s, "other")
	base := time.Now().UTC().Add(-10 * time.Hour).Truncate(time.Microsecond)
	finish := func(ws string, st skilld.TaskStatus, at time.Time) string {
		t.Helper()
		task := must[*skilld.Task](t)(s.TaskCreate(ctx(t), &store.TaskCreateParams{WorkspaceID: ws, Input: "x"}))
		must[*skilld.Task](t)(s.TaskUpdate(ctx(t), &store.TaskUpdateParams{ID: task.ID, Status: st, FinishedAt: &at}))
		return task.ID
	}
	third := finish(ws.ID, skilld.TaskCancelled, base.Add(3*time.Hour))
	first := finish(ws.ID, skilld.TaskCompleted, base.Add(time.Hour))
	second := finish(ws.ID, skilld.TaskFailed, base.Add(2*time.Hour+500*time.Millisecond))
	finish(ws.ID, skilld.TaskCompleted, base.Add(5*time.Hour)) // too recent
	finish(other.ID, skilld.TaskCompleted, base)
	// A task whose run is going on again is not finished, whatever its
	// row says of an earlier end.
	finish(ws.ID, skilld.TaskRunning, base)
	must[*skilld.Task](t)(s.TaskCreate(ctx(t), &store.TaskCreateParams{WorkspaceID: ws.ID, Input: "queued"}))

	before := base.Add(4 * time.Hour)
	got := must[[]string](t)(s.TaskListFinished(ctx(t), &store.TaskListFinishedParams{WorkspaceID: ws.ID, Before: before, Limit: 10}))
	if want := []string{first, second, third}; !slices.Equal(got, want) {
		t.Errorf("finished before %v: %v, want %v", before, got, want)
	}
	got = must[[]string](t)(s.TaskListFinished(ctx(t), &store.TaskListFinishedParams{WorkspaceID: ws.ID, Before: before, Limit: 2}))
	if want := []string{first, second}; !slices.Equal(got, want) {
		t.Errorf("the oldest 2: %v, want %v", got, want)
	}
	got = must[[]string](t)(s.TaskListFinished(ctx(t), &store.TaskListFinishedParams{WorkspaceID: ws.ID, Before: base.Add(2 * time.Hour), Limit: 10}))
	if want := []string{first}; !slices.Equal(got, want) {
		t.Errorf("finished before %v: %v, want %v", base.Add(2*time.Hour), got, want)
	}
}
