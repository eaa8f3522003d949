package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/store"
)

// logEvent appends an event to a task's log as a run would.
func (e *env) logEvent(taskID, typ string, data map[string]any) {
	e.t.Helper()
	payload, _ := json.Marshal(agent.Event{Type: typ, Data: data})
	if _, err := e.db.TaskLogAppend(e.t.Context(), &store.TaskLogAppendParams{TaskID: taskID, Kind: agent.KindEvent, Payload: payload}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) finish(taskID string) {
	e.t.Helper()
	out, now := "all done", time.Now()
	if _, err := e.db.TaskUpdate(e.t.Context(), &store.TaskUpdateParams{ID: taskID, Status: skilld.TaskCompleted, Output: &out, FinishedAt: &now}); err != nil {
		e.t.Fatal(err)
	}
}

func TestTaskPage(t *testing.T) {
	e := newEnv(t)
	f := e.fixture()
	b := e.signedIn(e.memberTok)
	tp := b.get("/ui/tasks")
	if !strings.Contains(element(t, tp, "tasks"), f.task.ID) || !strings.Contains(tp.body, `id="start"`) {
		t.Fatalf("tasks page:\n%s", tp.body)
	}
	p := b.post("/ui/tasks", url.Values{"csrf": {csrfOf(t, tp)}, "agent": {f.agent.ID}, "input": {"another"}})
	if p.status != http.StatusSeeOther || !strings.HasPrefix(p.header.Get("Location"), "/ui/tasks/") {
		t.Fatalf("start: %d\n%s", p.status, p.body)
	}

	id := f.task.ID
	e.logEvent(id, agent.EventLLMCallStarted, map[string]any{"iteration": 1, "messages": 2, "tools": 3, "estimated_tokens": 120})
	e.logEvent(id, agent.EventLLMCallStarted, map[string]any{"iteration": 2, "messages": 4, "tools": 3, "estimated_tokens": 300,
		"context": map[string]any{"window": 8000, "budget": 6000, "estimated_tokens": 300,
			"catalog":  map[string]any{"level": "full", "tokens": 40, "skills": []string{"report", "lint"}},
			"skills":   []map[string]any{{"name": "report", "tokens": 90, "placement": "context"}},
			"tools":    []string{"shell", "read_file"},
			"messages": map[string]any{"sent": 4, "left_out": 2, "left_out_seqs": []int{3, 4}, "summarized": true},
			"future":   "kept"}})
	e.logEvent(id, agent.EventApprovalRequested, map[string]any{"tool": "shell", "call_id": "call-1", "reason": "policy"})
	if _, err := e.db.TaskUpdate(t.Context(), &store.TaskUpdateParams{ID: id, Status: skilld.TaskWaitingForApproval}); err != nil {
		t.Fatal(err)
	}
	p = b.get("/ui/tasks/" + id)
	for _, want := range []string{`id="status"`, "waiting_for_approval", `id="output"`, `id="events"`, `id="cancel"`,
		`class="approve inline" method="post" action="/ui/tasks/` + id + `/approvals/call-1/approve"`, `class="deny inline"`} {
		if !strings.Contains(p.body, want) {
			t.Errorf("task page lacks %q", want)
		}
	}
	reqs := element(t, p, "requests")
	if n := strings.Count(reqs, `class="request card"`); n != 2 {
		t.Fatalf("%d .request elements, want 2:\n%s", n, reqs)
	}
	first, second := reqs[:strings.Index(reqs, `id="request-2"`)], reqs[strings.Index(reqs, `id="request-2"`):]
	if !strings.Contains(first, "<dd>120</dd>") || !strings.Contains(first, "<dd>2</dd>") {
		t.Errorf("a request without context shows the event's counters:\n%s", first)
	}
	for _, want := range []string{"<dd>8000</dd>", "<dd>6000</dd>", "level full", "tokens 40", "skills: report, lint", "shell, read_file",
		"sent 4 · left_out 2 · left_out_seqs 3, 4 · summarized yes", "<td>report</td><td>90</td><td>context</td>", "<dt>future</dt><dd>kept</dd>"} {
		if !strings.Contains(second, want) {
			t.Errorf("request with context lacks %q:\n%s", want, second)
		}
	}
	if !strings.Contains(p.body, `src="/ui/static/task.js"`) || !strings.Contains(p.body, `data-src="/ui/tasks/`+id+`/events?after=3"`) {
		t.Errorf("the page does not follow the stream from its last event")
	}
}

// TestEventStream: the UI's SSE endpoint relays the log after ?after,
// follows new entries and ends with "end" when the task is done.
func TestEventStream(t *testing.T) {
	e := newEnv(t)
	f := e.fixture()
	id := f.task.ID
	e.logEvent(id, agent.EventTaskStarted, map[string]any{})
	e.logEvent(id, agent.EventLLMCallStarted, map[string]any{"iteration": 1})

	b := e.signedIn(e.viewerTok)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.srv.URL+"/ui/tasks/"+id+"/events?after=1", nil)
	resp, err := b.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if resp.Header.Get("Content-Security-Policy") == "" {
		t.Errorf("the stream lacks the CSP")
	}
	sc := bufio.NewScanner(resp.Body)
	next := func() (id, event, data string) {
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if data != "" {
					return
				}
			case strings.HasPrefix(line, "id: "):
				id = line[4:]
			case strings.HasPrefix(line, "event: "):
				event = line[7:]
			case strings.HasPrefix(line, "data: "):
				data = line[6:]
			}
		}
		t.Fatalf("stream ended early: %v", sc.Err())
		return
	}
	seq, _, data := next()
	if seq != "2" || !strings.Contains(data, `"type":"llm.call.started"`) {
		t.Fatalf("first event after 1: id %s %s", seq, data)
	}
	// Live: entries written while the stream is open arrive, then the end.
	e.logEvent(id, agent.EventTaskCompleted, map[string]any{})
	e.finish(id)
	seq, _, data = next()
	if seq != "3" || !strings.Contains(data, `"type":"task.completed"`) {
		t.Fatalf("live event: id %s %s", seq, data)
	}
	if _, ev, data := next(); ev != "end" || !strings.Contains(data, "completed") {
		t.Fatalf("last event %q %s, want end", ev, data)
	}

	// Signed out, the stream is not served.
	if p := e.browser().get("/ui/tasks/" + id + "/events"); p.status != http.StatusSeeOther {
		t.Errorf("signed-out stream: %d", p.status)
	}
}

// TestLongTaskPage: however many events and model calls, the page stays
// under 100 KB.
func TestLongTaskPage(t *testing.T) {
	e := newEnv(t)
	f := e.fixture()
	ctxObj := map[string]any{"window": 128000, "budget": 100000, "estimated_tokens": 90000,
		"catalog":  map[string]any{"level": "full", "tokens": 400, "skills": []string{"a", "b", "c", "d", "e", "f"}},
		"skills":   []map[string]any{{"name": "a", "tokens": 900, "placement": "context"}, {"name": "b", "tokens": 800, "placement": "transcript"}},
		"tools":    []string{"shell", "read_file", "write_file", "list_files", "activate_skill", "read_skill_file"},
		"messages": map[string]any{"sent": 40, "left_out": 20, "left_out_seqs": []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, "summarized": true}}
	for i := range 400 {
		e.logEvent(f.task.ID, agent.EventLLMCallStarted, map[string]any{"iteration": i, "messages": 40, "tools": 6, "estimated_tokens": 90000, "context": ctxObj})
		e.logEvent(f.task.ID, agent.EventToolCall, map[string]any{"tool": "shell", "call_id": "c", "arguments_chars": 4000, "note": strings.Repeat("x", 500)})
	}
	p := e.signedIn(e.memberTok).get("/ui/tasks/" + f.task.ID)
	if p.status != 200 || len(p.body) >= 100_000 {
		t.Fatalf("long task page: %d, %d bytes", p.status, len(p.body))
	}
	if !strings.Contains(p.body, "earlier model calls are not shown") {
		t.Errorf("the page does not say that calls were left out")
	}
}
