package httpapi_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
)

// TestTaskFailureHidesInternalText fails a task's model call with an
// internal error whose text holds a secret. Whatever a client reads of
// the task — its row, its log as JSON, its event stream — says "internal
// error"; the server's log has the text, with the task's ID.
func TestTaskFailureHidesInternalText(t *testing.T) {
	e := newEnv(t, firstDriver(t))
	m := e.withExecutor(t)
	const secret = "Authorization: Bearer sk-live-0123456789abcdef"
	m.push(func(context.Context) (*model.Response, error) {
		return nil, fmt.Errorf("POST https://llm.internal.example/v1/chat: 401 (%s)", secret)
	})
	e.must(201, "POST", "/v1/workspaces/default/agents", e.admin, map[string]any{"name": "bot", "config": map[string]any{"model": "test:m"}})
	task := e.must(201, "POST", "/v1/workspaces/default/agents/bot/tasks", e.admin, map[string]any{"input": "go"})
	id := task["id"].(string)
	base := "/v1/workspaces/default/tasks/" + id

	events := e.sse(t, base+"/events", e.admin, "")
	last := events[len(events)-1]
	if f, ok := last.Payload.(agent.TaskFailed); !ok || f.Error != "internal error" || f.Code != skilld.EINTERNAL {
		t.Fatalf("the stream ended with %s %+v", last.Type, last.Payload)
	}
	row := e.request("GET", base, e.admin, nil)
	if row.status != 200 || !strings.Contains(string(row.body), `"message":"internal error"`) {
		t.Errorf("the task: %d %s", row.status, row.body)
	}
	for what, body := range map[string]string{
		"the task":         string(row.body),
		"the stream":       string(e.request("GET", base+"/events", e.admin, nil).body),
		"the log, as JSON": string(e.request("GET", base+"/events?format=json", e.admin, nil).body),
	} {
		if strings.Contains(body, "sk-live") || strings.Contains(body, "llm.internal") {
			t.Errorf("%s shows the internal error:\n%s", what, body)
		}
	}
	if logs := e.logs.String(); !strings.Contains(logs, "task="+id) || !strings.Contains(logs, "sk-live-0123456789abcdef") {
		t.Errorf("the server's log does not have the error:\n%s", logs)
	}
}
