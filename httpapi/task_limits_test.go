package httpapi_test

import (
	"context"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/executor"
	"github.com/skilld/skilld/sandbox/bwrap/bwraptest"
)

// TestQueuedCapOverHTTP: an instance admin caps a workspace's queued
// tasks with PATCH /v1/workspaces/{ws}; past the cap a start is 429
// rate_limited with Retry-After and a message saying how to raise it, and
// nothing is recorded; -1 gives the workspace the server's default again.
func TestQueuedCapOverHTTP(t *testing.T) {
	e := newEnv(t, firstDriver(t))
	m := &queueModel{}
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	for range 4 {
		m.push(func(ctx context.Context) (*model.Response, error) {
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return &model.Response{Message: model.Message{Content: "done"}, StopReason: model.StopEnd}, nil
		})
	}
	sbx, _ := bwraptest.New(t)
	e.runTasks(executor.Config{DB: e.db, Blobs: e.svc.Packages().Blobs, Sandboxes: sbx, MaxRunning: 1,
		OpenModel: func(string) (model.Model, string, error) { return m, "test", nil },
		Tokenizer: func(string) (agent.Counter, error) { return wordCount{}, nil },
		Window:    func(string) (int, bool) { return 100000, true }}, nil)

	ws := e.must(200, "PATCH", "/v1/workspaces/default", e.admin, map[string]any{"max_queued_tasks": 2})
	if ws["name"] != "default" || ws["max_queued_tasks"] != 2.0 || ws["max_running_tasks"] != nil {
		t.Fatalf("patched workspace %v", ws)
	}
	admin := e.token("default", "boss", "admin")
	if r := e.request("PATCH", "/v1/workspaces/default", admin, map[string]any{"max_queued_tasks": 50}); r.status != 403 {
		t.Errorf("a workspace admin raising its own cap: %d %s", r.status, r.body)
	}
	if r := e.request("PATCH", "/v1/workspaces/default", e.admin, map[string]any{"max_queued_tasks": -2}); r.status != 422 || r.errorField(t) != "max_queued_tasks" {
		t.Errorf("a cap of -2: %d %s", r.status, r.body)
	}

	e.must(201, "POST", "/v1/workspaces/default/agents", e.admin, map[string]any{"name": "bot", "config": map[string]any{"model": "test:m"}})
	start := func() response {
		return e.request("POST", "/v1/workspaces/default/agents/bot/tasks", e.admin, map[string]any{"input": "go"})
	}
	// One runs (the only place), two wait: the cap.
	for i, want := range []string{"running", "queued", "queued"} {
		r := start()
		if r.status != 201 || r.json(t)["status"] != want {
			t.Fatalf("start %d: %d %s, want 201 %s", i+1, r.status, r.body, want)
		}
	}
	r := start()
	if r.status != 429 || r.errorCode(t) != skilld.ERATELIMITED || r.header.Get("Retry-After") != "10" {
		t.Fatalf("a start past the cap: %d Retry-After %q %s", r.status, r.header.Get("Retry-After"), r.body)
	}
	msg := r.errorMessage(t)
	for _, want := range []string{`workspace "default" has 2 tasks queued`, "max_queued_tasks", "PATCH /v1/workspaces/default"} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal %q does not say %q", msg, want)
		}
	}
	if tasks := e.must(200, "GET", "/v1/workspaces/default/tasks", e.admin, nil); tasks["total"] != 3.0 {
		t.Errorf("the refused start was recorded: %v tasks", tasks["total"])
	}

	// Back to the server's default: none here.
	if ws := e.must(200, "PATCH", "/v1/workspaces/default", e.admin, map[string]any{"max_queued_tasks": -1}); ws["max_queued_tasks"] != nil {
		t.Errorf("after -1: %v", ws)
	}
	if r := start(); r.status != 201 || r.json(t)["status"] != "queued" {
		t.Errorf("a start without a cap: %d %s", r.status, r.body)
	}
}
