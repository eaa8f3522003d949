package httpapi_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

// TestDeleteTaskOverHTTP: DELETE …/tasks/{id} answers 204 for a finished
// task its starter or an admin deletes, after which the task, its events
// and its stored output are gone and fsck finds nothing unreferenced; 409
// for a task still going, 403 for a viewer and for a member who did not
// start it, 404 for a task that is not there (or no more).
func TestDeleteTaskOverHTTP(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *testEnv) {
		member := e.token("default", "starter", "member")
		otherMember := e.token("default", "bystander", "member")
		viewer := e.token("default", "watcher", "viewer")
		ag := e.must(201, "POST", "/v1/workspaces/default/agents", member, map[string]any{"name": "bot", "config": map[string]any{"model": "test:m"}})
		tasks := "/v1/workspaces/default/tasks/"
		// No executor runs here: a started task stays queued until the
		// test moves it on as a run would.
		start := func() string {
			return e.must(201, "POST", "/v1/workspaces/default/agents/"+ag["id"].(string)+"/tasks", member, map[string]any{"input": "go"})["id"].(string)
		}
		id := start()
		for _, st := range []skilld.TaskStatus{skilld.TaskQueued, skilld.TaskRunning} {
			e.setStatus(id, st)
			r := e.request("DELETE", tasks+id, member, nil)
			if r.status != 409 || r.errorCode(t) != "conflict" || !strings.Contains(r.errorMessage(t), "cancel it first") {
				t.Errorf("deleting a %s task: %d %s", st, r.status, r.body)
			}
		}
		output := e.logAndStore(id, strings.Repeat("a large tool output\n", 500))
		e.setStatus(id, skilld.TaskCompleted)
		for who, token := range map[string]string{"a viewer": viewer, "a member who did not start it": otherMember} {
			if r := e.request("DELETE", tasks+id, token, nil); r.status != 403 || r.errorCode(t) != "forbidden" {
				t.Errorf("deleting as %s: %d %s", who, r.status, r.body)
			}
		}
		e.must(204, "DELETE", tasks+id, member, nil)
		for _, path := range []string{tasks + id, tasks + id + "/events?format=json"} {
			if r := e.request("GET", path, member, nil); r.status != 404 || r.errorCode(t) != "not_found" {
				t.Errorf("GET %s after the delete: %d %s", path, r.status, r.body)
			}
		}
		if r := e.request("DELETE", tasks+id, member, nil); r.status != 404 {
			t.Errorf("deleting twice: %d %s", r.status, r.body)
		}
		if r := e.request("DELETE", tasks+"no-such-task", e.admin, nil); r.status != 404 {
			t.Errorf("deleting an unknown task: %d %s", r.status, r.body)
		}
		if _, err := e.svc.Packages().Blobs.Stat(t.Context(), output); skilld.ErrorCode(err) != skilld.ENOTFOUND {
			t.Errorf("the deleted task's output blob: %v", err)
		}

		// An admin deletes a member's task.
		other := start()
		e.logAndStore(other, "another output")
		e.setStatus(other, skilld.TaskFailed)
		e.must(204, "DELETE", tasks+other, e.admin, nil)
		rep := e.must(200, "POST", "/v1/admin/fsck", e.admin, map[string]any{})
		if len(rep["unreferenced"].([]any)) != 0 || len(rep["missing"].([]any)) != 0 || len(rep["damaged"].([]any)) != 0 {
			t.Errorf("fsck after the deletes: %v", rep)
		}
	})
}

// setStatus moves a task to status as its run would.
func (e *testEnv) setStatus(id string, st skilld.TaskStatus) {
	e.t.Helper()
	p := &store.TaskUpdateParams{ID: id, Status: st}
	if st.Done() {
		at := time.Now().UTC()
		p.FinishedAt = &at
	}
	if _, err := e.db.TaskUpdate(e.t.Context(), p); err != nil {
		e.t.Fatal(err)
	}
}

// logAndStore logs an entry of task id and stores a large output of it as
// its run would, and returns the output's digest.
func (e *testEnv) logAndStore(id, output string) string {
	e.t.Helper()
	ctx := e.t.Context()
	if _, err := e.db.TaskLogAppend(ctx, &store.TaskLogAppendParams{TaskID: id, Kind: "message", Payload: json.RawMessage(`{"role":"user","content":"go"}`)}); err != nil {
		e.t.Fatal(err)
	}
	info, err := e.svc.Packages().Blobs.Put(ctx, strings.NewReader(output))
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.db.TaskOutputAdd(ctx, &store.TaskOutputParams{TaskID: id, Digest: info.Digest}); err != nil {
		e.t.Fatal(err)
	}
	return info.Digest
}

// TestWorkspaceSettingsOverHTTP: PATCH /v1/workspaces/{ws} sets a
// workspace's task retention, for instance admins only; a bad value is 422
// naming task_retention.
func TestWorkspaceSettingsOverHTTP(t *testing.T) {
	e := newEnv(t, firstDriver(t))
	w := e.must(200, "PATCH", "/v1/workspaces/default", e.admin, map[string]any{"task_retention": "720h"})
	if w["task_retention"] != "720h" || w["name"] != "default" {
		t.Errorf("patched %v", w)
	}
	if r := e.request("PATCH", "/v1/workspaces/default", e.admin, map[string]any{"task_retention": "10s"}); r.status != 422 || r.errorField(t) != "task_retention" {
		t.Errorf("a retention under a minute: %d %s", r.status, r.body)
	}
	admin := e.token("default", "ws-admin", "admin")
	if r := e.request("PATCH", "/v1/workspaces/default", admin, map[string]any{"task_retention": "1h"}); r.status != 403 {
		t.Errorf("a workspace admin: %d %s", r.status, r.body)
	}
	list := e.must(200, "GET", "/v1/workspaces", e.admin, nil)["items"].([]any)
	if got := list[0].(map[string]any)["task_retention"]; got != "720h" {
		t.Errorf("listed retention %v", got)
	}
	e.must(200, "PATCH", "/v1/workspaces/default", e.admin, map[string]any{"task_retention": ""})
	if r := e.request("PATCH", "/v1/workspaces/missing", e.admin, map[string]any{}); r.status != 404 {
		t.Errorf("an unknown workspace: %d %s", r.status, r.body)
	}
}
