package metrics_test

import (
	"context"
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
	run.Event(agent.Event{Type: agent.EventTaskStarted, Time: t0, Data: map[string]any{"tools_withheld": 2}})
	run.Event(agent.Event{Type: agent.EventLLMCallStarted, Time: t0})
	// Live events carry model.Usage; events read back from a log, JSON.
	run.Event(agent.Event{Type: agent.EventLLMCallCompleted, Time: t0.Add(2 * time.Second), Data: map[string]any{"usage": model.Usage{PromptTokens: 100, CompletionTokens: 7}}})
	run.Event(agent.Event{Type: agent.EventLLMCallStarted, Time: t0})
	run.Event(agent.Event{Type: agent.EventLLMCallCompleted, Time: t0, Data: map[string]any{"usage": map[string]any{"prompt_tokens": 10.0, "completion_tokens": 3.0}}})
	run.Event(agent.Event{Type: agent.EventContextCompacted, Data: map[string]any{"summarized": true}})
	run.Event(agent.Event{Type: agent.EventSkillRefused, Data: map[string]any{"skill": "x"}})
	run.Event(agent.Event{Type: agent.EventToolResult, Data: map[string]any{"tool": "shell", "is_error": true, "error_code": "invalid"}})
	run.SandboxExec(&sandbox.Result{Duration: 3 * time.Second, Limit: sandbox.LimitMemory,
		Egress: []sandbox.EgressEvent{{Host: "a.example", Allowed: true, BytesUp: 10, BytesDown: 200}, {Host: "b.example"}}}, nil)
	run.SandboxExec(nil, errors.New("no bwrap"))
	run.Event(agent.Event{Type: agent.EventLLMCallStarted, Time: t0})
	run.Event(agent.Event{Type: agent.EventTaskFailed, Data: map[string]any{"error": "model down"}})
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
