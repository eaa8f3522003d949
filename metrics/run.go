package metrics

import (
	"context"
	"sync"
	"time"

	"github.com/skilld/skilld/agent"
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
	switch p := ev.Payload.(type) {
	case agent.TaskStarted:
		m.toolsWithheld.Add(float64(p.ToolsWithheld))
	case agent.LLMCallStarted:
		r.callStart = eventTime(ev)
	case agent.LLMCallCompleted:
		m.modelCalls.WithLabelValues(r.provider).Inc()
		if !r.callStart.IsZero() {
			m.modelDuration.WithLabelValues(r.provider).Observe(eventTime(ev).Sub(r.callStart).Seconds())
		}
		r.callStart = time.Time{}
		// A counter panics on a negative count, which a provider may
		// report.
		m.modelTokens.WithLabelValues(r.provider, "prompt").Add(float64(max(p.Usage.PromptTokens, 0)))
		m.modelTokens.WithLabelValues(r.provider, "completion").Add(float64(max(p.Usage.CompletionTokens, 0)))
	case agent.TaskFailed:
		// A failure while a call is open is that call's failure (the
		// runtime has no event of its own for it).
		if !r.callStart.IsZero() {
			m.modelErrors.WithLabelValues(r.provider).Inc()
			r.callStart = time.Time{}
		}
	case agent.ToolResult:
		result := "ok"
		if p.IsError {
			result = "error"
		}
		m.toolCalls.WithLabelValues(p.Tool, result).Inc()
	case agent.SkillActivated:
		m.activations.Inc()
	case agent.SkillRefused:
		m.refusals.Inc()
	case agent.ContextCompacted:
		result := "failed"
		if p.Summarized {
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
