package metrics_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/executor"
	"github.com/skilld/skilld/metrics"
	"github.com/skilld/skilld/sandbox"
)

func TestRunEvents(t *testing.T) {
	m := metrics.New(metrics.Config{})
	run := m.RunStarted(context.Background(), executor.RunInfo{TaskID: "t1", Model: "openai:gpt", Provider: "openai"})
	t0 := time.Now()
	run.Event(event(t0, agent.TaskStarted{ToolsWithheld: 2}))
	run.Event(event(t0, agent.LLMCallStarted{}))
	// Live events carry their payload; an event read back from a log
	// decodes into the same.
	run.Event(event(t0.Add(2*time.Second), agent.LLMCallCompleted{Usage: model.Usage{PromptTokens: 100, CompletionTokens: 7}}))
	run.Event(event(t0, agent.LLMCallStarted{}))
	run.Event(decoded(t, `{"type":"llm.call.completed","usage":{"prompt_tokens":10,"completion_tokens":3}}`))
	run.Event(event(time.Time{}, agent.ContextCompacted{Summarized: true}))
	run.Event(event(time.Time{}, agent.SkillRefused{Skill: "x"}))
	run.Event(event(time.Time{}, agent.ToolResult{CallRef: agent.CallRef{Tool: "shell"}, IsError: true, ErrorCode: "invalid"}))
	run.SandboxExec(&sandbox.Result{Duration: 3 * time.Second, Limit: sandbox.LimitMemory,
		Egress: []sandbox.EgressEvent{{Host: "a.example", Allowed: true, BytesUp: 10, BytesDown: 200}, {Host: "b.example"}}}, nil)
	run.SandboxExec(nil, errors.New("no bwrap"))
	run.Event(event(t0, agent.LLMCallStarted{}))
	run.Event(event(time.Time{}, agent.TaskFailed{Error: "model down"}))
	run.Ended("failed")
	m.StorageError("the task log", skilld.FromBackend(skilld.BackendDatabase, skilld.Errorf(skilld.EUNAVAILABLE, "db restarting")))
	m.ObserveError("api", skilld.BackendBlob, skilld.ENOTFOUND) // a client's error: not counted
	m.ObserveError("api", "", skilld.EINTERNAL)
	m.ObserveError("api", skilld.BackendBlob, skilld.EINTEGRITY)

	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"skilld_model_tokens_total", map[string]string{"provider": "openai", "kind": "prompt"}, 110},
		{"skilld_model_tokens_total", map[string]string{"provider": "openai", "kind": "completion"}, 10},
		{"skilld_errors_total", map[string]string{"source": "api", "backend": "none", "code": "internal"}, 1},
		{"skilld_errors_total", map[string]string{"source": "api", "backend": "blob", "code": "integrity"}, 1},
		{"skilld_errors_total", map[string]string{"source": "api", "backend": "blob", "code": "not_found"}, 0},
		{"skilld_errors_total", map[string]string{"source": "api", "backend": "database", "code": "unavailable"}, 0},
		{"skilld_errors_total", map[string]string{"source": "executor", "backend": "database", "code": "unavailable"}, 1},
		{"skilld_errors_total", map[string]string{"source": "executor", "backend": "blob", "code": "unavailable"}, 0},
		{"skilld_sandbox_limit_kills_total", map[string]string{"limit": "memory"}, 1},
		{"skilld_sandbox_egress_total", map[string]string{"result": "allowed"}, 1},
		{"skilld_sandbox_egress_total", map[string]string{"result": "denied"}, 1},
		{"skilld_sandbox_egress_bytes_total", map[string]string{"direction": "up"}, 10},
		{"skilld_sandbox_egress_bytes_total", map[string]string{"direction": "down"}, 200},
		{"skilld_task_runs_total", map[string]string{"outcome": "failed"}, 1},
		{"skilld_tool_calls_total", map[string]string{"tool": "shell", "result": "error"}, 1},
	} {
		if got := value(t, m, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	for name, want := range map[string]float64{
		"skilld_model_calls_total":             2,
		"skilld_model_call_errors_total":       1,
		"skilld_model_call_duration_seconds":   2,
		"skilld_tools_withheld_total":          2,
		"skilld_skill_refusals_total":          1,
		"skilld_sandbox_exec_errors_total":     1,
		"skilld_sandbox_exec_duration_seconds": 1,
		"skilld_sandbox_limit_kills_total":     1,
		"skilld_context_compactions_total":     1,
		"skilld_tool_calls_total":              1,
		"skilld_task_runs_total":               1,
	} {
		if got := value(t, m, name, nil); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
}

// TestRunEventsMissingFields feeds events that lack fields, as an older
// log or a provider that reports no usage gives them: an answer without
// usage, with a null one, with negative counts (a provider's nonsense,
// which a counter would panic on), and events without a payload. None
// may panic, and each answer is counted once.
func TestRunEventsMissingFields(t *testing.T) {
	m := metrics.New(metrics.Config{})
	run := m.RunStarted(context.Background(), executor.RunInfo{TaskID: "t1", Provider: "openai"})
	for _, ev := range []agent.Event{
		decoded(t, `{"type":"task.started"}`),
		decoded(t, `{"type":"llm.call.completed"}`),
		decoded(t, `{"type":"llm.call.completed","usage":null}`),
		decoded(t, `{"type":"llm.call.completed","usage":{"prompt_tokens":-5,"completion_tokens":2}}`),
		decoded(t, `{"type":"tool.result"}`),
		decoded(t, `{"type":"some.future.event","usage":"?"}`),
		{Type: agent.EventLLMCallCompleted},
		{Type: agent.EventTaskFailed},
	} {
		run.Event(ev)
	}
	if got := value(t, m, "skilld_model_calls_total", nil); got != 3 {
		t.Errorf("model calls = %v, want 3", got)
	}
	if got := value(t, m, "skilld_model_tokens_total", map[string]string{"kind": "prompt"}); got != 0 {
		t.Errorf("prompt tokens = %v, want 0", got)
	}
	if got := value(t, m, "skilld_model_tokens_total", map[string]string{"kind": "completion"}); got != 2 {
		t.Errorf("completion tokens = %v, want 2", got)
	}
}

// event is a live event of the payload's type.
func event(at time.Time, p agent.Payload) agent.Event {
	return agent.Event{Type: p.EventType(), TaskID: "t1", Time: at, Payload: p}
}

// decoded is an event as read back from a task log.
func decoded(t *testing.T, js string) agent.Event {
	t.Helper()
	var ev agent.Event
	if err := json.Unmarshal([]byte(js), &ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

func TestTasksSeriesFailsAlone(t *testing.T) {
	m := metrics.New(metrics.Config{Tasks: func(context.Context) (map[skilld.TaskStatus]int, error) {
		return nil, skilld.Errorf(skilld.EUNAVAILABLE, "database down")
	}})
	m.ObserveRequest("GET", "GET /healthz", 200, time.Millisecond)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	if rec.Code != 200 || strings.Contains(body, "skilld_tasks{") || !strings.Contains(body, `skilld_http_request_duration_seconds_count{method="GET",route="GET /healthz",status="200"} 1`) {
		t.Errorf("%d\n%s", rec.Code, body)
	}
}

// value sums a family's counters, or its histograms' counts, over the
// series whose labels include labels.
func value(t *testing.T, m *metrics.Metrics, name string, labels map[string]string) float64 {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	series:
		for _, s := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range s.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if have[k] != v {
					continue series
				}
			}
			total += s.GetCounter().GetValue() + float64(s.GetHistogram().GetSampleCount())
		}
	}
	return total
}

// TestHeadroomSeries: free disk per named folder and free descriptors are
// read at each scrape; a folder the reader does not know is -1.
func TestHeadroomSeries(t *testing.T) {
	m := metrics.New(metrics.Config{})
	free := int64(5 << 30)
	if err := m.WatchHeadroom([]string{"data", "work"}, func() (map[string]int64, int) {
		return map[string]int64{"data": free}, 40
	}); err != nil {
		t.Fatal(err)
	}
	scrape := func() string {
		rec := httptest.NewRecorder()
		m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		return rec.Body.String()
	}
	body := scrape()
	for _, want := range []string{`skilld_disk_free_bytes{folder="data"} 5.36870912e+09`, `skilld_disk_free_bytes{folder="work"} -1`, "skilld_descriptors_free 40"} {
		if !strings.Contains(body, want) {
			t.Errorf("missing %s in\n%s", want, body)
		}
	}
	free = 1 << 20
	if body := scrape(); !strings.Contains(body, `skilld_disk_free_bytes{folder="data"} 1.048576e+06`) {
		t.Errorf("a second scrape reads again:\n%s", body)
	}
}

func TestTasksExpired(t *testing.T) {
	m := metrics.New(metrics.Config{})
	if got := value(t, m, "skilld_tasks_expired_total", nil); got != 0 {
		t.Errorf("before any sweep: %v", got)
	}
	m.TasksExpired(3)
	m.TasksExpired(0)
	m.TasksExpired(2)
	if got := value(t, m, "skilld_tasks_expired_total", nil); got != 5 {
		t.Errorf("after sweeps of 3, 0 and 2 tasks: %v", got)
	}
}

// TestStreams: refusals are counted by kind and reason, every known pair
// from 0, and the open streams of each kind are read at each scrape.
func TestStreams(t *testing.T) {
	m := metrics.New(metrics.Config{})
	open := 3
	if err := m.WatchStreams(metrics.StreamsTaskEvents, func() int { return open }); err != nil {
		t.Fatal(err)
	}
	if err := m.WatchStreams(metrics.StreamsMCPSessions, func() int { return 1 }); err != nil {
		t.Fatal(err)
	}
	m.RefusedStream(metrics.StreamsTaskEvents, "per_token")
	m.RefusedStream(metrics.StreamsTaskEvents, "per_token")
	m.RefusedStream(metrics.StreamsMCPSessions, "shutdown")
	open = 5
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	for _, want := range []string{
		`skilld_stream_refusals_total{kind="task_events",reason="per_token"} 2`,
		`skilld_stream_refusals_total{kind="task_events",reason="total"} 0`,
		`skilld_stream_refusals_total{kind="mcp_sessions",reason="shutdown"} 1`,
		`skilld_open_streams{kind="task_events"} 5`,
		`skilld_open_streams{kind="mcp_sessions"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("no %s in\n%s", want, body)
		}
	}
}
