package storetest

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

// testStorageUsage: a task's row counts the bytes of its log entries and
// of its outputs (each once); a workspace's usage sums its tasks, counts
// them by status and follows deletions; the top list orders workspaces by
// what they keep; a workspace's own quota is set, kept and cleared.
func testStorageUsage(t *testing.T, open Opener) {
	s := open(t)
	a, b := newWorkspace(t, s, "keeps-much"), newWorkspace(t, s, "keeps-little")
	newSkill(t, s, a.ID, "one")
	task := func(ws *skilld.Workspace, entries ...string) *skilld.Task {
		tk := must[*skilld.Task](t)(s.TaskCreate(ctx(t), &store.TaskCreateParams{WorkspaceID: ws.ID, Input: "x"}))
		for _, e := range entries {
			must[*skilld.TaskLogEntry](t)(s.TaskLogAppend(ctx(t), &store.TaskLogAppendParams{TaskID: tk.ID, Kind: "event", Payload: json.RawMessage(e)}))
		}
		return must[*skilld.Task](t)(s.TaskGet(ctx(t), &store.TaskGetParams{ID: tk.ID}))
	}
	first := task(a, `{"type":"task.started"}`, `{"type":"note","text":"ünïcode counts in bytes"}`)
	if want := int64(len(`{"type":"task.started"}`) + len(`{"type":"note","text":"ünïcode counts in bytes"}`)); first.Stored.LogBytes != want {
		t.Errorf("a task with two entries keeps %d log bytes, want %d", first.Stored.LogBytes, want)
	}
	out := "sha256:" + fmt.Sprintf("%064d", 17)
	for range 2 { // the same output twice counts once
		if err := s.TaskOutputAdd(ctx(t), &store.TaskOutputParams{TaskID: first.ID, Digest: out, Size: 5000}); err != nil {
			t.Fatal(err)
		}
	}
	wantCode(t, s.TaskOutputAdd(ctx(t), &store.TaskOutputParams{TaskID: first.ID, Digest: out, Size: -1}), skilld.EINVALID)
	first = must[*skilld.Task](t)(s.TaskGet(ctx(t), &store.TaskGetParams{ID: first.ID}))
	if first.Stored.OutputBytes != 5000 {
		t.Errorf("a task with one 5000-byte output keeps %d output bytes", first.Stored.OutputBytes)
	}
	second := task(a, `{"type":"task.started"}`)
	running := "running"
	must[*skilld.Task](t)(s.TaskUpdate(ctx(t), &store.TaskUpdateParams{ID: second.ID, Status: skilld.TaskStatus(running)}))
	small := task(b, `{}`)

	u := must[*skilld.WorkspaceUsage](t)(s.WorkspaceUsage(ctx(t), &store.WorkspaceUsageParams{ID: a.ID}))
	want := first.Stored.LogBytes + 5000 + second.Stored.LogBytes
	if u.Workspace != "keeps-much" || u.Skills != 1 || u.TasksTotal != 2 || u.Tasks[skilld.TaskQueued] != 1 || u.Tasks[skilld.TaskRunning] != 1 ||
		u.StoredBytes != want || u.Stored.OutputBytes != 5000 || u.StorageQuota != 0 {
		t.Errorf("usage %+v, want %d bytes over 2 tasks", u, want)
	}
	_, err := s.WorkspaceUsage(ctx(t), &store.WorkspaceUsageParams{ID: "missing"})
	wantCode(t, err, skilld.ENOTFOUND)
	empty := newWorkspace(t, s, "keeps-nothing")
	if u := must[*skilld.WorkspaceUsage](t)(s.WorkspaceUsage(ctx(t), &store.WorkspaceUsageParams{ID: empty.ID})); u.TasksTotal != 0 || u.StoredBytes != 0 || u.Tasks == nil {
		t.Errorf("an empty workspace's usage %+v", u)
	}

	top := must[[]*skilld.WorkspaceUsage](t)(s.WorkspaceStorageTop(ctx(t), &store.WorkspaceStorageTopParams{Limit: 10}))
	if len(top) != 2 || top[0].WorkspaceID != a.ID || top[0].StoredBytes != want || top[0].TasksTotal != 2 ||
		top[1].WorkspaceID != b.ID || top[1].StoredBytes != small.Stored.LogBytes {
		t.Errorf("top %+v", top)
	}
	if top := must[[]*skilld.WorkspaceUsage](t)(s.WorkspaceStorageTop(ctx(t), &store.WorkspaceStorageTopParams{Limit: 1})); len(top) != 1 || top[0].WorkspaceID != a.ID {
		t.Errorf("the top one: %+v", top)
	}

	// Deleting a task takes what it kept out of the sum.
	done := "completed"
	must[*skilld.Task](t)(s.TaskUpdate(ctx(t), &store.TaskUpdateParams{ID: first.ID, Status: skilld.TaskStatus(done)}))
	must[*store.TaskDeleteResult](t)(s.TaskDelete(ctx(t), &store.TaskDeleteParams{ID: first.ID}))
	if u := must[*skilld.WorkspaceUsage](t)(s.WorkspaceUsage(ctx(t), &store.WorkspaceUsageParams{ID: a.ID})); u.StoredBytes != second.Stored.LogBytes || u.TasksTotal != 1 {
		t.Errorf("after deleting a task: %+v", u)
	}

	// A quota of the workspace's own: set, read back, cleared.
	quota, unset := int64(1<<30), int64(-1)
	up := must[*skilld.Workspace](t)(s.WorkspaceUpdate(ctx(t), &store.WorkspaceUpdateParams{ID: a.ID, StorageQuota: &quota}))
	if up.StorageQuota == nil || *up.StorageQuota != quota {
		t.Errorf("set quota: %+v", up)
	}
	if u := must[*skilld.WorkspaceUsage](t)(s.WorkspaceUsage(ctx(t), &store.WorkspaceUsageParams{ID: a.ID})); u.StorageQuota != quota {
		t.Errorf("usage quota %d", u.StorageQuota)
	}
	if up = must[*skilld.Workspace](t)(s.WorkspaceUpdate(ctx(t), &store.WorkspaceUpdateParams{ID: a.ID, StorageQuota: &unset})); up.StorageQuota != nil {
		t.Errorf("cleared quota: %+v", up)
	}
	// Leniency on long fields: off by default, on, and off again.
	yes, no := true, false
	if up.LenientLengths {
		t.Errorf("a new workspace is lenient: %+v", up)
	}
	if up = must[*skilld.Workspace](t)(s.WorkspaceUpdate(ctx(t), &store.WorkspaceUpdateParams{ID: a.ID, LenientLengths: &yes})); !up.LenientLengths {
		t.Errorf("lenient lengths not set: %+v", up)
	}
	if got := must[*skilld.Workspace](t)(s.WorkspaceGet(ctx(t), &store.WorkspaceGetParams{ID: a.ID})); !got.LenientLengths || got.StorageQuota != nil {
		t.Errorf("read back %+v", got)
	}
	if up = must[*skilld.Workspace](t)(s.WorkspaceUpdate(ctx(t), &store.WorkspaceUpdateParams{ID: a.ID, LenientLengths: &no})); up.LenientLengths {
		t.Errorf("lenient lengths not cleared: %+v", up)
	}
}
