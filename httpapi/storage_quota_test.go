package httpapi_test

import (
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
)

// TestStorageQuotaOverHTTP: GET /v1/workspaces/{ws}/usage shows what a
// workspace's tasks keep (its members may read it, other tenants not);
// an instance admin sets a workspace's quota below that and the next
// start is 507 quota_exceeded, saying how to get room, with nothing
// recorded; deleting the task frees the room at once, and -1 gives the
// workspace the server's quota again.
func TestStorageQuotaOverHTTP(t *testing.T) {
	e := newEnv(t, firstDriver(t))
	m := e.withExecutor(t)
	m.push(toolCall("c1", agent.ToolShell, map[string]string{"command": "yes | head -c 300000"}))
	m.push(final("done"))
	e.must(201, "POST", "/v1/workspaces/default/agents", e.admin, map[string]any{"name": "bot", "config": map[string]any{"model": "test:m"}})
	start := func() response {
		return e.request("POST", "/v1/workspaces/default/agents/bot/tasks", e.admin, map[string]any{"input": "go"})
	}
	r := start()
	if r.status != 201 {
		t.Fatalf("start: %d %s", r.status, r.body)
	}
	id := r.json(t)["id"].(string)
	task := waitTask(t, e, id, "completed")
	stored := task["stored"].(map[string]any)
	if out := stored["output_bytes"].(float64); out < 300000 || out > 301000 || stored["log_bytes"].(float64) < 500 {
		t.Errorf("the task keeps %v; its one large output was 300000 bytes and a status line", stored)
	}

	viewer := e.token("default", "looker", "viewer")
	u := e.must(200, "GET", "/v1/workspaces/default/usage", viewer, nil)
	want := stored["output_bytes"].(float64) + stored["log_bytes"].(float64)
	if u["workspace"] != "default" || u["stored_bytes"] != want || u["tasks_total"] != 1.0 || u["tasks"].(map[string]any)["completed"] != 1.0 ||
		u["storage_quota"] != 0.0 || u["quota_source"] != "server" {
		t.Errorf("usage %v, want %v bytes stored", u, want)
	}
	e.must(201, "POST", "/v1/workspaces", e.admin, map[string]any{"name": "other"})
	stranger := e.token("other", "nosy", "admin")
	if r := e.request("GET", "/v1/workspaces/default/usage", stranger, nil); r.status != 404 && r.status != 403 {
		t.Errorf("another tenant read the usage: %d %s", r.status, r.body)
	}

	quota := int64(want) - 1
	if ws := e.must(200, "PATCH", "/v1/workspaces/default", e.admin, map[string]any{"storage_quota": quota}); ws["storage_quota"] != float64(quota) {
		t.Fatalf("patched %v", ws)
	}
	if r := e.request("PATCH", "/v1/workspaces/default", e.admin, map[string]any{"storage_quota": -2}); r.status != 422 || r.errorField(t) != "storage_quota" {
		t.Errorf("a quota of -2: %d %s", r.status, r.body)
	}
	r = start()
	if r.status != 507 || r.errorCode(t) != skilld.EQUOTA {
		t.Fatalf("a start past the quota: %d %s", r.status, r.body)
	}
	for _, w := range []string{`workspace "default" keeps`, "storage_quota", "DELETE /v1/workspaces/default/tasks/{id}"} {
		if !strings.Contains(r.errorMessage(t), w) {
			t.Errorf("the refusal %q does not say %q", r.errorMessage(t), w)
		}
	}
	if u := e.must(200, "GET", "/v1/workspaces/default/usage", viewer, nil); u["tasks_total"] != 1.0 || u["storage_quota"] != float64(quota) || u["quota_source"] != "workspace" {
		t.Errorf("after the refusal: %v", u)
	}

	e.must(204, "DELETE", "/v1/workspaces/default/tasks/"+id, e.admin, nil)
	m.push(final("again"))
	if r := start(); r.status != 201 { // at once: the deletion drops what was remembered
		t.Errorf("a start once the task was deleted: %d %s", r.status, r.body)
	}
	if u := e.must(200, "GET", "/v1/workspaces/default/usage", viewer, nil); u["tasks_total"] != 1.0 {
		t.Errorf("after deleting the task and starting one: %v", u)
	}
	if ws := e.must(200, "PATCH", "/v1/workspaces/default", e.admin, map[string]any{"storage_quota": -1}); ws["storage_quota"] != nil {
		t.Errorf("after -1: %v", ws)
	}
}
