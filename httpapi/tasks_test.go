package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/executor"
	"github.com/skilld/skilld/sandbox/bwrap/bwraptest"
	"github.com/skilld/skilld/store"
)

// queueModel answers requests from a queue that tests fill.
type queueModel struct {
	mu      sync.Mutex
	answers []func(ctx context.Context) (*model.Response, error)
}

func (m *queueModel) push(f func(ctx context.Context) (*model.Response, error)) {
	m.mu.Lock()
	m.answers = append(m.answers, f)
	m.mu.Unlock()
}

func (m *queueModel) Generate(ctx context.Context, _ *model.Request) iter.Seq2[*model.Chunk, error] {
	return func(yield func(*model.Chunk, error) bool) {
		m.mu.Lock()
		if len(m.answers) == 0 {
			m.mu.Unlock()
			yield(nil, skilld.Errorf(skilld.EINVALID, "no answer queued"))
			return
		}
		f := m.answers[0]
		m.answers = m.answers[1:]
		m.mu.Unlock()
		resp, err := f(ctx)
		if err != nil {
			yield(nil, err)
			return
		}
		resp.Message.Role = model.RoleAssistant
		yield(&model.Chunk{Text: resp.Message.Content, Response: resp}, nil)
	}
}

func toolCall(id, name string, args any) func(context.Context) (*model.Response, error) {
	return func(context.Context) (*model.Response, error) {
		b, _ := json.Marshal(args)
		return &model.Response{Message: model.Message{ToolCalls: []model.ToolCall{{ID: id, Name: name, Arguments: b}}}, StopReason: model.StopToolCalls}, nil
	}
}

func final(text string) func(context.Context) (*model.Response, error) {
	return func(context.Context) (*model.Response, error) {
		return &model.Response{Message: model.Message{Content: text}, StopReason: model.StopEnd}, nil
	}
}

type wordCount struct{}

func (wordCount) Count(s string) int { return len(strings.Fields(s)) + 1 }

// withExecutor connects a local executor with a queued model to the
// environment and serves the API again with its watcher.
func (e *testEnv) withExecutor(t *testing.T) *queueModel {
	m := &queueModel{}
	blobs := e.svc.Packages().Blobs
	sbx, _ := bwraptest.New(t)
	logger := slog.New(slog.NewTextHandler(e.logs, nil))
	e.runTasks(executor.Config{DB: e.db, Blobs: blobs, Sandboxes: sbx,
		OpenModel: func(string) (model.Model, string, error) { return m, "test", nil },
		Tokenizer: func(string) (agent.Counter, error) { return wordCount{}, nil },
		Window:    func(string) (int, bool) { return 100000, true },
		Logger:    logger,
	}, nil)
	t.Cleanup(e.srv.Close)
	return m
}

// sse reads a Server-Sent Events stream to its end.
func (e *testEnv) sse(t *testing.T, path, token, lastID string) []agent.Event {
	t.Helper()
	req, _ := http.NewRequest("GET", e.srv.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	// The stream ends with the task; read it whole, so the contract check
	// sees every event.
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	e.checkContract(req, nil, resp, body)
	var events []agent.Event
	var id, typ string
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			typ = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var ev agent.Event
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev); err != nil {
				t.Fatal(err)
			}
			if strconv.FormatInt(ev.Seq, 10) != id || ev.Type != typ {
				t.Errorf("SSE id %s / event %s disagree with data %d / %s", id, typ, ev.Seq, ev.Type)
			}
			events = append(events, ev)
		}
	}
	return events
}

func TestTasksOverHTTP(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *testEnv) {
		m := e.withExecutor(t)
		e.must(201, "POST", "/v1/workspaces/default/skills", e.admin, map[string]any{"files": map[string]string{"SKILL.md": skillMD("helper", "Helps.")}})
		ag := e.must(201, "POST", "/v1/workspaces/default/agents", e.admin, map[string]any{
			"name": "bot", "config": map[string]any{"model": "test:m", "instruction": "Be useful.", "tools": map[string]any{"require_approval": []string{"write_file"}}},
			"skills": []map[string]any{{"skill": "helper"}},
		})
		m.push(toolCall("c1", agent.ActivateSkill, map[string]string{"skill_name": "helper"}))
		m.push(toolCall("c2", agent.ToolWriteFile, map[string]string{"path": "a.txt", "content": "x"}))
		m.push(final("All done."))
		task := e.must(201, "POST", "/v1/workspaces/default/agents/"+ag["id"].(string)+"/tasks", e.admin, map[string]any{"input": "help me"})
		id := task["id"].(string)
		if task["status"] != "running" && task["status"] != "waiting_for_approval" {
			t.Errorf("started task %v", task)
		}
		base := "/v1/workspaces/default/tasks/" + id
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if st := e.must(200, "GET", base, e.admin, nil)["status"]; st == "waiting_for_approval" {
				break
			} else if time.Now().After(deadline) {
				t.Fatalf("task never waited for approval: %v", st)
			}
		}
		viewer := e.token("default", "watcher", "viewer")
		if r := e.request("POST", base+"/approvals/c2", viewer, map[string]any{"approved": true}); r.status != 403 {
			t.Errorf("a viewer approving: %d", r.status)
		}
		e.must(200, "POST", base+"/approvals/c2", e.admin, map[string]any{"approved": true})

		events := e.sse(t, base+"/events", viewer, "")
		if len(events) == 0 || events[len(events)-1].Type != agent.EventTaskCompleted {
			t.Fatalf("stream ended with %v", events)
		}
		for i, ev := range events {
			if ev.Seq != int64(i+1) {
				t.Fatalf("event %d has seq %d", i, ev.Seq)
			}
		}
		types := map[string]bool{}
		for _, ev := range events {
			types[ev.Type] = true
			if m, _ := ev.Payload.(agent.Message); strings.Contains(m.Content, "# helper") {
				t.Error("the stream carries a skill body")
			}
		}
		for _, want := range []string{"task.started", "llm.call.started", "llm.call.completed", "skill.activated", "tool.approval.requested", "tool.approval.decided", "tool.result", "message", "task.completed"} {
			if !types[want] {
				t.Errorf("no %s event", want)
			}
		}
		// Resuming after an id sends only what follows.
		rest := e.sse(t, base+"/events", viewer, strconv.Itoa(len(events)-2))
		if len(rest) != 2 || rest[0].Seq != int64(len(events)-1) {
			t.Errorf("resumed stream: %d events from %v", len(rest), rest)
		}
		js := e.must(200, "GET", base+"/events?format=json&after=3", viewer, nil)
		if items := js["items"].([]any); len(items) != len(events)-3 || js["has_more"] != false || js["next_after"] != float64(len(events)) {
			t.Errorf("json events: %d, has_more %v, next_after %v", len(items), js["has_more"], js["next_after"])
		}
		// Paged by limit, the answers chain through next_after; the one
		// ending exactly at the log's end says no more.
		var paged []any
		for after, n := 0.0, 0; ; n++ {
			page := e.must(200, "GET", base+"/events?format=json&limit=2&after="+strconv.Itoa(int(after)), viewer, nil)
			paged = append(paged, page["items"].([]any)...)
			if page["has_more"] != true {
				break
			}
			if page["next_after"].(float64) <= after || n > len(events) {
				t.Fatalf("page after %v: %v", after, page)
			}
			after = page["next_after"].(float64)
		}
		if len(paged) != len(events) {
			t.Errorf("paged json events: %d of %d", len(paged), len(events))
		}
		// A log longer than the default answer (1,000 entries) says so.
		for range 1000 {
			if _, err := e.db.TaskLogAppend(t.Context(), &store.TaskLogAppendParams{TaskID: id, Kind: agent.EventMessage, Payload: json.RawMessage(`{"role":"user","content":"more"}`)}); err != nil {
				t.Fatal(err)
			}
		}
		total := len(events) + 1000
		first := e.must(200, "GET", base+"/events?format=json", viewer, nil)
		if len(first["items"].([]any)) != 1000 || first["has_more"] != true || first["next_after"] != 1000.0 {
			t.Errorf("first page of %d entries: %d items, has_more %v, next_after %v", total, len(first["items"].([]any)), first["has_more"], first["next_after"])
		}
		rest2 := e.must(200, "GET", base+"/events?format=json&after=1000", viewer, nil)
		if len(rest2["items"].([]any)) != total-1000 || rest2["has_more"] != false || rest2["next_after"] != float64(total) {
			t.Errorf("second page: %d items, has_more %v, next_after %v", len(rest2["items"].([]any)), rest2["has_more"], rest2["next_after"])
		}
		done := e.must(200, "GET", base, viewer, nil)
		if done["status"] != "completed" || done["config"] == nil {
			t.Errorf("task %v", done)
		}
		list := e.must(200, "GET", "/v1/workspaces/default/tasks?status=completed", viewer, nil)
		if list["total"].(float64) != 1 {
			t.Errorf("tasks %v", list)
		}

		// Cancelling a task that waits on the model.
		m.push(func(ctx context.Context) (*model.Response, error) { <-ctx.Done(); return nil, ctx.Err() })
		long := e.must(201, "POST", "/v1/workspaces/default/agents/bot/tasks", e.admin, map[string]any{"input": "take long"})
		lid := long["id"].(string)
		e.must(200, "POST", "/v1/workspaces/default/tasks/"+lid+"/cancel", e.admin, nil)
		evs := e.sse(t, "/v1/workspaces/default/tasks/"+lid+"/events", e.admin, "")
		if last := evs[len(evs)-1]; last.Type != agent.EventTaskFailed {
			t.Errorf("cancelled task ends with %s", last.Type)
		}
		if st := e.must(200, "GET", "/v1/workspaces/default/tasks/"+lid, e.admin, nil)["status"]; st != "cancelled" {
			t.Errorf("status %v", st)
		}
		// Another workspace sees nothing.
		e.must(201, "POST", "/v1/workspaces", e.admin, map[string]any{"name": "elsewhere"})
		other := e.token("elsewhere", "x", "admin")
		if r := e.request("GET", "/v1/workspaces/elsewhere/tasks/"+id+"/events", other, nil); r.status != 404 {
			t.Errorf("other workspace's stream: %d", r.status)
		}
	})
}
