package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/internal/streamlimit"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/web"
)

// logEvent appends an event to a task's log as a run would.
func (e *env) logEvent(taskID string, p agent.Payload) {
	e.t.Helper()
	payload, _ := json.Marshal(agent.Event{Type: p.EventType(), Payload: p})
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
	e.logEvent(id, agent.LLMCallStarted{Iteration: 1, Messages: 2, Tools: 3, EstimatedTokens: 120})
	e.logEvent(id, agent.LLMCallStarted{Iteration: 2, Messages: 4, Tools: 3, EstimatedTokens: 300,
		Context: &agent.RequestContext{Window: 8000, Budget: 6000, EstimatedTokens: 300, Placement: agent.PlacementContext,
			Catalog:   &agent.RequestCatalog{Level: "full", Tokens: 40, Skills: []string{"report", "lint"}},
			Skills:    []agent.RequestSkill{{Name: "report", Tokens: 90, Placement: "context"}},
			Tools:     []string{"shell", "read_file"},
			ToolsMore: 3,
			Messages:  agent.RequestMessages{Sent: 4, LeftOut: 2, LeftOutSeqs: [][2]int64{{3, 4}}, Summarized: true}}})
	e.logEvent(id, agent.ApprovalRequested{CallRef: agent.CallRef{Tool: "shell", CallID: "call-1"}, Reason: "policy"})
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
		"sent 4 · left_out 2 · left_out_seqs 3–4 · summarized yes", "<td>report</td><td>90</td><td>context</td>", "<dt>placement</dt><dd>context</dd>",
		"<dt>tools_more</dt><dd>3</dd>"} {
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
	e.logEvent(id, agent.TaskStarted{})
	e.logEvent(id, agent.LLMCallStarted{Iteration: 1})

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
	e.logEvent(id, agent.TaskCompleted{})
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

// TestEventStreamLimitAndShutdown: the page's stream shares the API's
// limiter: a token over its streams gets 429 with Retry-After; when the
// server stops, an open stream ends at once with a retry field (an
// EventSource reconnects after it by itself) and later ones get 503.
func TestEventStreamLimitAndShutdown(t *testing.T) {
	e := newEnv(t)
	lim := streamlimit.New(streamlimit.Config{What: "event streams", PerToken: 1, RetryAfter: 2 * time.Second})
	e.serve(web.Options{Streams: lim})
	f := e.fixture()
	e.logEvent(f.task.ID, agent.TaskStarted{})
	b := e.signedIn(e.viewerTok)
	path := "/ui/tasks/" + f.task.ID + "/events"
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.srv.URL+path, nil)
	resp, err := b.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("stream: %d", resp.StatusCode)
	}
	if p := b.get(path); p.status != http.StatusTooManyRequests || p.header.Get("Retry-After") != "2" {
		t.Errorf("a second stream of the token: %d, Retry-After %q", p.status, p.header.Get("Retry-After"))
	}
	lim.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(body), "retry: 2000\nevent: shutdown\ndata: {\"code\":\"unavailable\",\"message\":\"the server is shutting down; reconnect with Last-Event-ID to resume after the last event received\"}\n\n") {
		t.Errorf("the stream did not end with the shutdown event:\n%s", body)
	}
	if p := b.get(path); p.status != http.StatusServiceUnavailable || p.header.Get("Retry-After") != "2" {
		t.Errorf("a stream while stopping: %d, Retry-After %q", p.status, p.header.Get("Retry-After"))
	}
}

// TestLongTaskPage: however many events and model calls, the page stays
// under 100 KB.
func TestLongTaskPage(t *testing.T) {
	e := newEnv(t)
	f := e.fixture()
	ctxObj := &agent.RequestContext{Window: 128000, Budget: 100000, EstimatedTokens: 90000,
		Catalog:  &agent.RequestCatalog{Level: "full", Tokens: 400, Skills: []string{"a", "b", "c", "d", "e", "f"}},
		Skills:   []agent.RequestSkill{{Name: "a", Tokens: 900, Placement: "context"}, {Name: "b", Tokens: 800, Placement: "transcript"}},
		Tools:    []string{"shell", "read_file", "write_file", "list_files", "activate_skill", "read_skill_file"},
		Messages: agent.RequestMessages{Sent: 40, LeftOut: 20, LeftOutSeqs: [][2]int64{{1, 2}, {3, 4}, {5, 6}, {7, 8}, {9, 10}}, Summarized: true}}
	for i := range 400 {
		e.logEvent(f.task.ID, agent.LLMCallStarted{Iteration: i, Messages: 40, Tools: 6, EstimatedTokens: 90000, Context: ctxObj})
		e.logEvent(f.task.ID, agent.ToolCall{CallRef: agent.CallRef{Tool: strings.Repeat("x", 500), CallID: "c"}, ArgumentsChars: 4000})
	}
	p := e.signedIn(e.memberTok).get("/ui/tasks/" + f.task.ID)
	if p.status != 200 || len(p.body) >= 100_000 {
		t.Fatalf("long task page: %d, %d bytes", p.status, len(p.body))
	}
	if !strings.Contains(p.body, "earlier model calls are not shown") {
		t.Errorf("the page does not say that calls were left out")
	}
}

// TestDeleteTaskPage: a finished task's page has a delete form in place of
// cancel; it deletes only with its box ticked, only for the task's starter
// or an admin, and then shows the tasks that are left.
func TestDeleteTaskPage(t *testing.T) {
	e := newEnv(t)
	f := e.fixture()
	id := f.task.ID
	b := e.signedIn(e.memberTok)
	if p := b.get("/ui/tasks/" + id); !strings.Contains(p.body, `id="cancel"`) || strings.Contains(p.body, `id="delete"`) {
		t.Fatalf("a queued task's page offers to delete it:\n%s", p.body)
	}
	e.finish(id)
	p := b.get("/ui/tasks/" + id)
	if !strings.Contains(p.body, `id="delete" method="post" action="/ui/tasks/`+id+`/delete"`) || strings.Contains(p.body, `id="cancel"`) ||
		!strings.Contains(p.body, `name="confirm" type="checkbox" value="yes" required`) {
		t.Fatalf("a finished task's page lacks the delete form:\n%s", element(t, p, "controls"))
	}
	csrf := csrfOf(t, p)
	if p := b.post("/ui/tasks/"+id+"/delete", url.Values{"csrf": {csrf}}); p.status != http.StatusUnprocessableEntity || !strings.Contains(errorText(t, p), "tick the box") {
		t.Errorf("delete without the box ticked: %d", p.status)
	}
	if p := b.post("/ui/tasks/"+id+"/delete", url.Values{"confirm": {"yes"}}); p.status != http.StatusForbidden {
		t.Errorf("delete without the CSRF token: %d", p.status)
	}
	viewer := e.signedIn(e.viewerTok)
	if p := viewer.post("/ui/tasks/"+id+"/delete", url.Values{"csrf": {viewer.csrf()}, "confirm": {"yes"}}); p.status != http.StatusForbidden {
		t.Errorf("a viewer's delete: %d", p.status)
	}
	if p := b.get("/ui/tasks/" + id); p.status != http.StatusOK {
		t.Fatalf("a refused delete took the task: %d", p.status)
	}
	p = b.post("/ui/tasks/"+id+"/delete", url.Values{"csrf": {csrf}, "confirm": {"yes"}})
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/ui/tasks" {
		t.Fatalf("delete: %d %s\n%s", p.status, p.header.Get("Location"), p.body)
	}
	if p := b.get("/ui/tasks/" + id); p.status != http.StatusNotFound {
		t.Errorf("the deleted task's page: %d", p.status)
	}
	if p := b.get("/ui/tasks"); strings.Contains(p.body, id) {
		t.Errorf("the tasks page still lists the deleted task")
	}
}
