package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
)

// TestOpenAPIEventStream reads a finished task's log as a Server-Sent
// Events stream and as JSON through the checked request helper, so both
// answers are held to the document: every event's data against TaskEvent,
// its id and name against its seq and type, the JSON against
// TaskEventList.
func TestOpenAPIEventStream(t *testing.T) {
	e := newEnv(t, firstDriver(t))
	m := e.withExecutor(t)
	e.must(201, "POST", "/v1/workspaces/default/skills", e.admin, map[string]any{"files": map[string]string{"SKILL.md": skillMD("helper", "Helps.")}})
	e.must(201, "POST", "/v1/workspaces/default/agents", e.admin, map[string]any{
		"name": "bot", "config": map[string]any{"model": "test:m", "instruction": "Be useful."}, "skills": []map[string]any{{"skill": "helper"}}})
	m.push(toolCall("c1", agent.ActivateSkill, map[string]string{"skill_name": "helper"}))
	m.push(final("All done."))
	task := e.must(201, "POST", "/v1/workspaces/default/agents/bot/tasks", e.admin, map[string]any{"input": "help me"})
	base := "/v1/workspaces/default/tasks/" + task["id"].(string)

	// The stream of a running task follows it to its end, then closes.
	r := e.request("GET", base+"/events", e.admin, nil)
	if r.status != 200 || r.header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", r.status, r.header.Get("Content-Type"))
	}
	events := parseSSE(r.body)
	names := map[string]bool{}
	for _, ev := range events {
		names[ev.name] = true
	}
	for _, want := range []string{agent.EventTaskStarted, agent.EventSkillActivated, agent.EventMessage, agent.EventTaskCompleted} {
		if !names[want] {
			t.Errorf("the stream has no %s event: %v", want, names)
		}
	}
	js := e.must(200, "GET", base+"/events?format=json", e.admin, nil)
	if items, _ := js["items"].([]any); len(items) != len(events) {
		t.Errorf("the JSON log has %d entries, the stream %d", len(items), len(events))
	}
	// Resuming with Last-Event-ID (a documented header) sends the rest.
	if rest := parseSSE(e.request("GET", base+"/events", e.admin, nil, "Last-Event-ID", "2").body); len(rest) != len(events)-2 {
		t.Errorf("resumed after 2: %d of %d events", len(rest), len(events))
	}
}

// TestOpenAPIEventStreamError revokes the token of a stream that follows a
// running task: the stream ends with an error event, whose data the
// document says is an ErrorObject.
func TestOpenAPIEventStreamError(t *testing.T) {
	e := newEnv(t, firstDriver(t))
	task := e.slowTask(t)
	tok := e.must(201, "POST", "/v1/workspaces/default/tokens", e.admin, map[string]any{"name": "watcher", "role": "viewer"})

	// By hand, to revoke the token once the stream has begun.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL+"/v1/workspaces/default/tasks/"+task["id"].(string)+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+tok["token"].(string))
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	e.must(204, "DELETE", "/v1/workspaces/default/tokens/"+tok["id"].(string), e.admin, nil)
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	e.checkContract(req, nil, resp, data)
	events := parseSSE(data)
	if len(events) == 0 || events[len(events)-1].name != "error" || !strings.Contains(events[len(events)-1].data, skilld.EUNAUTHORIZED) {
		t.Errorf("the stream did not end with an error event:\n%s", clip(data))
	}
}
