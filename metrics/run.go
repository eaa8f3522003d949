package metrics

import (
	"context"
	"sync"
	"time"

	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/executor"
	"github.com/skilld/skilld/sandbox"
)

// RunStarted returns the recorder of one task run (executor.Observer).
func (m *Metrics) RunStarted(_ context.Context, info executor.RunInfo) executor.RunObserver {
	provider := info.Provider
	if provider == "" {
		provider = "unknown"
	}
	for _, kind := range []string{"prompt", "completion"} {
		m.modelTokens.WithLabelValues(provider, kind)
	}
	m.modelCalls.WithLabelValues(provider)
	m.modelErrors.WithLabelValues(provider)
	return &runRecorder{m: m, provider: provider}
}

// runRecorder derives the agent-level series from one run's events.
type runRecorder struct {
	m        *Metrics
	provider string

	mu        sync.Mutex
	callStart time.Time // the open model call's llm.call.started; zero when none is open
}

func (r *runRecorder) Event(ev agent.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.m
	switch ev.Type {
	case agent.EventTaskStarted:
		if n, ok := number(ev.Data["tools_withheld"]); ok {
			m.toolsWithheld.Add(n)
		}
	case agent.EventLLMCallStarted:
		r.callStart = eventTime(ev)
	case agent.EventLLMCallCompleted:
		m.modelCalls.WithLabelValues(r.provider).Inc()
		if !r.callStart.IsZero() {
			m.modelDuration.WithLabelValues(r.provider).Observe(eventTime(ev).Sub(r.callStart).Seconds())
		}
		r.callStart = time.Time{}
		if u, ok := usage(ev.Data["usage"]); ok {
			m.modelTokens.WithLabelValues(r.provider, "prompt").Add(float64(u.PromptTokens))
			m.modelTokens.WithLabelValues(r.provider, "completion").Add(float64(u.CompletionTokens))
		}
	case agent.EventTaskFailed:
		// A failure while a call is open is that call's failure (the
		// runtime has no event of its own for it).
		if !r.callStart.IsZero() {
			m.modelErrors.WithLabelValues(r.provider).Inc()
			r.callStart = time.Time{}
		}
	case agent.EventToolResult:
		tool, _ := ev.Data["tool"].(string)
		result := "ok"
		if isErr, _ := ev.Data["is_error"].(bool); isErr {
			result = "error"
		}
		m.toolCalls.WithLabelValues(tool, result).Inc()
	case agent.EventSkillActivated:
		m.activations.Inc()
	case agent.EventSkillRefused:
		m.refusals.Inc()
	case agent.EventContextCompacted:
		result := "failed"
		if ok, _ := ev.Data["summarized"].(bool); ok {
			result = "summarized"
		}
		m.compactions.WithLabelValues(result).Inc()
	}
}

func (r *runRecorder) SandboxExec(res *sandbox.Result, err error) {
	switch {
	case err != nil:
		r.m.execErrors.Inc()
	case res != nil:
		r.m.execDuration.Observe(res.Duration.Seconds())
		if res.Limit != "" {
			r.m.limitKills.WithLabelValues(res.Limit).Inc()
		}
		// Cardinality stays fixed: hosts are in the task's log, not here.
		for _, e := range res.Egress {
			result := "allowed"
			if !e.Allowed {
				result = "denied"
			}
			r.m.egress.WithLabelValues(result).Inc()
			r.m.egressBytes.WithLabelValues("up").Add(float64(e.BytesUp))
			r.m.egressBytes.WithLabelValues("down").Add(float64(e.BytesDown))
		}
	}
}

func (r *runRecorder) Ended(outcome string) {
	r.m.runs.WithLabelValues(outcome).Inc()
}

// eventTime is when an event happened: its logged time, or now for one
// that has none (a run without a log).
func eventTime(ev agent.Event) time.Time {
	if ev.Time.IsZero() {
		return time.Now()
	}
	return ev.Time
}

// usage reads an event's usage: a model.Usage as the run delivers it live,
// or its JSON form read back from a log.
func usage(v any) (model.Usage, bool) {
	switch u := v.(type) {
	case model.Usage:
		return u, true
	case *model.Usage:
		return *u, u != nil
	case map[string]any:
		p, ok1 := number(u["prompt_tokens"])
		c, ok2 := number(u["completion_tokens"])
		return model.Usage{PromptTokens: int(p), CompletionTokens: int(c)}, ok1 || ok2
	}
	return model.Usage{}, false
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}
