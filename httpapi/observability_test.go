package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/skilld/skilld/agent"
	agentmodel "github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/executor"
	"github.com/skilld/skilld/httpapi"
	"github.com/skilld/skilld/metrics"
	"github.com/skilld/skilld/sandbox/bwrap/bwraptest"
	"github.com/skilld/skilld/tracing"
)

// obsEnv is a test environment whose server and executor report to real
// metrics and an in-memory span recorder, and log JSON.
type obsEnv struct {
	*testEnv
	metrics *metrics.Metrics
	spans   *tracetest.SpanRecorder
	model   *queueModel
	// jsonLogs has the server's log lines, in JSON.
	jsonLogs *lockedWriter
}

func newObsEnv(t *testing.T) *obsEnv {
	t.Helper()
	e := newEnv(t, firstDriver(t))
	o := &obsEnv{testEnv: e, spans: tracetest.NewSpanRecorder(), model: &queueModel{}, jsonLogs: &lockedWriter{w: &bytes.Buffer{}}}
	o.metrics = metrics.New(metrics.Config{Tasks: metrics.StoreTasks(e.db)})
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(o.spans))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	tracer := tp.Tracer("test")
	sbx, _ := bwraptest.New(t)
	ex := e.runTasks(executor.Config{DB: e.db, Blobs: e.svc.Packages().Blobs, Sandboxes: sbx,
		OpenModel: func(string) (agentmodel.Model, string, error) { return o.model, "test", nil },
		Tokenizer: func(string) (agent.Counter, error) { return wordCount{}, nil },
		Window:    func(string) (int, bool) { return 100000, true },
		Observer:  executor.Observers{o.metrics, tracing.Observer{Tracer: tracer}},
	}, nil)
	if err := o.metrics.WatchQueue(ex.Queued); err != nil {
		t.Fatal(err)
	}
	logger := slog.New(httpapi.NewLogHandler(slog.NewJSONHandler(o.jsonLogs, nil)))
	e.serve(&httpapi.Server{Logger: logger, Watcher: ex, Metrics: o.metrics, Tracer: tracer})
	return o
}

// runTask runs a task that activates a skill, runs one command and one that
// the time limit kills, with list_files denied by the agent's policy; it
// returns the task's id once its stream has ended.
func (o *obsEnv) runTask(t *testing.T) string {
	t.Helper()
	o.must(201, "POST", "/v1/workspaces/default/skills", o.admin, map[string]any{"files": map[string]string{"SKILL.md": skillMD("helper", "Helps.")}})
	ag := o.must(201, "POST", "/v1/workspaces/default/agents", o.admin, map[string]any{
		"name": "bot", "config": map[string]any{"model": "test:m", "instruction": "Be useful.", "tools": map[string]any{"denied": []string{agent.ToolListFiles}}},
		"skills": []map[string]any{{"skill": "helper"}},
	})
	o.model.push(toolCall("c1", agent.ActivateSkill, map[string]string{"skill_name": "helper"}))
	o.model.push(toolCall("c2", agent.ToolShell, map[string]any{"command": "echo hi"}))
	o.model.push(toolCall("c3", agent.ToolShell, map[string]any{"command": "sleep 30", "timeout_s": 1}))
	o.model.push(final("All done."))
	task := o.must(201, "POST", "/v1/workspaces/default/agents/"+ag["id"].(string)+"/tasks", o.admin, map[string]any{"input": "help me"})
	id := task["id"].(string)
	events := o.sse(t, "/v1/workspaces/default/tasks/"+id+"/events", o.admin, "")
	if len(events) == 0 || events[len(events)-1].Type != agent.EventTaskCompleted {
		t.Fatalf("stream ended with %v", events)
	}
	if started, _ := events[0].Payload.(agent.TaskStarted); started.ToolsWithheld != 1 || !slices.Equal(started.WithheldTools, []string{agent.ToolListFiles}) {
		t.Errorf("first event %v, want task.started with list_files withheld", started)
	}
	return id
}

// scrape reads /metrics and parses it as Prometheus text.
func (o *obsEnv) scrape(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(o.srv.URL + httpapi.MetricsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /metrics: %d", resp.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return families
}

// sum adds up the values (counts, for histograms) of a family's series
// whose labels include want.
func sum(t *testing.T, families map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	t.Helper()
	f := families[name]
	if f == nil {
		t.Errorf("no series %s", name)
		return 0
	}
	total := 0.0
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			match = match && labels[k] == v
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			total += m.GetCounter().GetValue()
		case m.Gauge != nil:
			total += m.GetGauge().GetValue()
		case m.Histogram != nil:
			total += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return total
}

func TestMetricsEndpoint(t *testing.T) {
	o := newObsEnv(t)
	o.runTask(t)
	o.request("GET", "/v1/no/such/route", o.admin, nil)
	// The stream ends with task.completed, a moment before the run itself.
	fam := o.scrape(t)
	for deadline := time.Now().Add(5 * time.Second); sum(t, fam, "skilld_task_runs_total", map[string]string{"outcome": "completed"}) == 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		fam = o.scrape(t)
	}
	atLeast := func(name string, labels map[string]string, min float64) {
		t.Helper()
		if got := sum(t, fam, name, labels); got < min {
			t.Errorf("%s%v = %v, want at least %v", name, labels, got, min)
		}
	}
	exactly := func(name string, labels map[string]string, want float64) {
		t.Helper()
		if got := sum(t, fam, name, labels); got != want {
			t.Errorf("%s%v = %v, want %v", name, labels, got, want)
		}
	}
	atLeast("skilld_http_request_duration_seconds", map[string]string{"route": "POST /v1/workspaces/{ws}/agents/{id}/tasks", "status": "201"}, 1)
	atLeast("skilld_http_request_duration_seconds", map[string]string{"route": "unmatched", "status": "404"}, 1)
	exactly("skilld_tasks", map[string]string{"status": "completed"}, 1)
	exactly("skilld_tasks", map[string]string{"status": "running"}, 0)
	exactly("skilld_queued_tasks", nil, 0)
	exactly("skilld_task_runs_total", map[string]string{"outcome": "completed"}, 1)
	exactly("skilld_model_calls_total", map[string]string{"provider": "test"}, 4)
	exactly("skilld_model_call_errors_total", map[string]string{"provider": "test"}, 0)
	exactly("skilld_model_call_duration_seconds", map[string]string{"provider": "test"}, 4)
	exactly("skilld_model_tokens_total", map[string]string{"provider": "test", "kind": "prompt"}, 0) // the queue model reports no usage
	exactly("skilld_model_tokens_total", map[string]string{"provider": "test", "kind": "completion"}, 0)
	exactly("skilld_tool_calls_total", map[string]string{"tool": agent.ToolShell}, 2)
	exactly("skilld_tool_calls_total", map[string]string{"tool": agent.ActivateSkill, "result": "ok"}, 1)
	exactly("skilld_skill_activations_total", nil, 1)
	exactly("skilld_skill_refusals_total", nil, 0)
	exactly("skilld_context_compactions_total", nil, 0)
	exactly("skilld_tools_withheld_total", nil, 1)
	exactly("skilld_sandbox_exec_duration_seconds", nil, 2)
	exactly("skilld_sandbox_exec_errors_total", nil, 0)
	exactly("skilld_sandbox_limit_kills_total", map[string]string{"limit": "timeout"}, 1)
	exactly("skilld_errors_total", map[string]string{"source": "api"}, 0)
	exactly("skilld_errors_total", map[string]string{"source": "executor"}, 0)
	atLeast("go_goroutines", nil, 1)
	if h := fam["skilld_sandbox_exec_duration_seconds"].GetMetric()[0].GetHistogram(); h.GetSampleSum() < 0.9 {
		t.Errorf("sandbox durations sum to %vs; the killed command alone ran 1s", h.GetSampleSum())
	}
}

// TestErrorsByBackend: skilld_errors_total tells the blob store's faults
// from the database's, through the real drivers: a damaged stored file is
// a blob integrity error, a request after the database closed a database
// one, and neither is counted under the other.
func TestErrorsByBackend(t *testing.T) {
	o := newObsEnv(t)
	sk := o.must(201, "POST", "/v1/workspaces/default/skills", o.admin, map[string]any{"files": map[string]string{
		"SKILL.md": skillMD("fragile", "Its file gets damaged."), "notes.txt": strings.Repeat("n", 500)}})
	files := o.must(200, "GET", "/v1/workspaces/default/skills/"+sk["id"].(string)+"/files", o.admin, nil)
	for _, f := range files["files"].([]any) {
		if f := f.(map[string]any); f["path"] == "notes.txt" {
			o.corruptBlob(t, f["digest"].(string))
		}
	}
	if r := o.request("GET", "/v1/workspaces/default/skills/fragile/files/notes.txt", o.admin, nil); r.errorCode(t) != "integrity" {
		t.Fatalf("reading the damaged file: %d %s", r.status, r.body)
	}
	series := func(backend, code string) map[string]string {
		return map[string]string{"source": "api", "backend": backend, "code": code}
	}
	fam := o.scrape(t)
	if got := sum(t, fam, "skilld_errors_total", series("blob", "integrity")); got != 1 {
		t.Errorf("blob integrity errors = %v, want 1", got)
	}
	if got := sum(t, fam, "skilld_errors_total", map[string]string{"backend": "database"}); got != 0 {
		t.Errorf("database errors before the database closed = %v, want 0", got)
	}

	o.db.Close()
	r := o.request("GET", "/v1/workspaces/default/skills", o.admin, nil)
	if r.status < 500 {
		t.Fatalf("listing with the database closed: %d %s", r.status, r.body)
	}
	fam = o.scrape(t)
	if got := sum(t, fam, "skilld_errors_total", series("database", r.errorCode(t))); got != 1 {
		t.Errorf("database %s errors = %v, want 1 (%s)", r.errorCode(t), got, r.body)
	}
	if got := sum(t, fam, "skilld_errors_total", map[string]string{"backend": "blob"}); got != 1 {
		t.Errorf("blob errors after the database closed = %v, want still 1", got)
	}
	if got := sum(t, fam, "skilld_errors_total", map[string]string{"backend": "none"}); got != 0 {
		t.Errorf("errors no backend raised = %v, want 0", got)
	}
}

func TestRequestIDsInJSONLogs(t *testing.T) {
	o := newObsEnv(t)
	r := o.request("GET", "/v1/workspaces/default/skills", o.admin, nil, "X-Request-Id", "lb-7f3a.01")
	if got := r.header.Get("X-Request-Id"); got != "lb-7f3a.01" {
		t.Errorf("X-Request-Id %q, want the incoming one", got)
	}
	for _, bad := range []string{strings.Repeat("a", httpapi.MaxRequestIDLen+1), "two words", "x\"y", "ü"} {
		r := o.request("GET", "/v1/workspaces/default/skills", o.admin, nil, "X-Request-Id", bad)
		if got := r.header.Get("X-Request-Id"); got == bad || len(got) != 16 {
			t.Errorf("incoming id %q became %q, want a new 16-character id", bad, got)
		}
	}
	gen := o.request("GET", "/v1/workspaces/default/skills/nope", o.admin, nil).header.Get("X-Request-Id")

	lines := map[string]map[string]any{}
	sc := bufio.NewScanner(strings.NewReader(o.jsonLogs.String()))
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("log line %q is not JSON: %v", sc.Text(), err)
		}
		if line["msg"] == "request" {
			lines[line["request_id"].(string)] = line
		}
	}
	if l := lines["lb-7f3a.01"]; l == nil || l["route"] != "GET /v1/workspaces/{ws}/skills" || l["status"] != float64(200) {
		t.Errorf("log line of the request with an incoming id: %v", l)
	}
	if l := lines[gen]; l == nil || l["status"] != float64(404) {
		t.Errorf("log line of request %s: %v (lines %v)", gen, l, lines)
	}

	// Lines logged with a request's context carry its id without naming it.
	var buf bytes.Buffer
	logger := slog.New(httpapi.NewLogHandler(slog.NewJSONHandler(&buf, nil)))
	logger.With("part", "x").InfoContext(httpapi.ContextWithRequestID(context.Background(), "abc"), "working")
	logger.InfoContext(httpapi.ContextWithRequestID(context.Background(), "abc"), "explicit", "request_id", "own")
	out := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var first, second map[string]any
	json.Unmarshal([]byte(out[0]), &first)
	json.Unmarshal([]byte(out[1]), &second)
	if first["request_id"] != "abc" || first["part"] != "x" {
		t.Errorf("line %s", out[0])
	}
	if strings.Count(out[1], "request_id") != 1 || second["request_id"] != "own" {
		t.Errorf("line %s, want its own request_id once", out[1])
	}
}

func TestTraceParentage(t *testing.T) {
	o := newObsEnv(t)
	id := o.runTask(t)
	var task sdktrace.ReadOnlySpan
	for deadline := time.Now().Add(10 * time.Second); task == nil; time.Sleep(20 * time.Millisecond) {
		for _, s := range o.spans.Ended() {
			if s.Name() == tracing.SpanTask {
				task = s
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the task span never ended")
		}
	}
	spans := o.spans.Ended()
	byID := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		byID[s.SpanContext().SpanID().String()] = s
	}
	req := byID[task.Parent().SpanID().String()]
	if req == nil || req.Name() != "POST /v1/workspaces/{ws}/agents/{id}/tasks" {
		t.Fatalf("the task span's parent is %v, want the request that started it", req)
	}
	if !task.Parent().IsValid() || task.SpanContext().TraceID() != req.SpanContext().TraceID() {
		t.Error("the task is not in the request's trace")
	}
	found := false
	for _, a := range task.Attributes() {
		found = found || (string(a.Key) == "skilld.task_id" && a.Value.AsString() == id)
	}
	if !found {
		t.Errorf("task span attributes %v", task.Attributes())
	}
	count := map[string]int{}
	for _, s := range spans {
		parent := byID[s.Parent().SpanID().String()]
		switch {
		case s.Name() == tracing.SpanModelCall, strings.HasPrefix(s.Name(), tracing.SpanToolCall+" "):
			if parent == nil || parent.SpanContext().SpanID() != task.SpanContext().SpanID() {
				t.Errorf("span %s is not the task's child", s.Name())
			}
		case s.Name() == tracing.SpanActivation:
			if parent == nil || parent.Name() != tracing.SpanToolCall+" "+agent.ActivateSkill {
				t.Errorf("the activation's parent is %v, want its activate_skill call", parent)
			}
		}
		count[s.Name()]++
	}
	if count[tracing.SpanModelCall] != 4 || count[tracing.SpanToolCall+" "+agent.ToolShell] != 2 ||
		count[tracing.SpanToolCall+" "+agent.ActivateSkill] != 1 || count[tracing.SpanActivation] != 1 {
		t.Errorf("spans %v", count)
	}
}
