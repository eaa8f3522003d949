// Package tracing makes OpenTelemetry spans of task runs from their event
// stream: a span per run (the child of the API request that started the
// task, when there was one) and, under it, a span per model call, per tool
// call and per skill activation. It implements executor.Observer over a
// trace.Tracer it is given: no global tracer provider.
package tracing

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/executor"
	"github.com/skilld/skilld/sandbox"
)

// Span names.
const (
	SpanTask       = "task"
	SpanModelCall  = "model.call"
	SpanToolCall   = "tool.call"
	SpanActivation = "skill.activation"
)

// Observer traces task runs (executor.Observer).
type Observer struct {
	Tracer trace.Tracer
}

var _ executor.Observer = Observer{}

// RunStarted opens the run's span under whatever span ctx carries.
func (o Observer) RunStarted(ctx context.Context, info executor.RunInfo) executor.RunObserver {
	ctx, span := o.Tracer.Start(ctx, SpanTask, trace.WithAttributes(
		attribute.String("skilld.task_id", info.TaskID), attribute.String("gen_ai.request.model", info.Model),
		attribute.String("gen_ai.provider.name", info.Provider)))
	return &runTracer{tracer: o.Tracer, ctx: ctx, task: span, provider: info.Provider, tools: map[string]trace.Span{}}
}

// StorageError is for metrics; traces show failures on the spans.
func (Observer) StorageError(string, error) {}

// runTracer holds the open spans of one run.
type runTracer struct {
	tracer   trace.Tracer
	provider string

	mu    sync.Mutex
	ctx   context.Context // carries the task span
	task  trace.Span
	call  trace.Span            // the open model call, or nil
	tools map[string]trace.Span // open tool calls by call id
	// toolCtx is the context of the open activate_skill call, the parent
	// of the activation it leads to.
	toolCtx context.Context
}

func (r *runTracer) Event(ev agent.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	at := ev.Time
	if at.IsZero() {
		at = time.Now()
	}
	switch ev.Type {
	case agent.EventTaskStarted:
		if n, ok := ev.Data["tools_withheld"].(int); ok {
			r.task.SetAttributes(attribute.Int("skilld.tools_withheld", n))
		}
	case agent.EventLLMCallStarted:
		_, r.call = r.tracer.Start(r.ctx, SpanModelCall, trace.WithTimestamp(at), trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(attribute.String("gen_ai.provider.name", r.provider)))
	case agent.EventLLMCallCompleted:
		if r.call == nil {
			return
		}
		if u, ok := ev.Data["usage"].(model.Usage); ok {
			r.call.SetAttributes(attribute.Int("gen_ai.usage.input_tokens", u.PromptTokens), attribute.Int("gen_ai.usage.output_tokens", u.CompletionTokens))
		}
		if s, ok := ev.Data["stop_reason"].(string); ok {
			r.call.SetAttributes(attribute.String("gen_ai.response.finish_reason", s))
		}
		r.call.End(trace.WithTimestamp(at))
		r.call = nil
	case agent.EventToolCall:
		tool, _ := ev.Data["tool"].(string)
		id, _ := ev.Data["call_id"].(string)
		ctx, span := r.tracer.Start(r.ctx, SpanToolCall+" "+tool, trace.WithTimestamp(at),
			trace.WithAttributes(attribute.String("gen_ai.tool.name", tool), attribute.String("gen_ai.tool.call.id", id)))
		r.tools[id] = span
		if tool == agent.ActivateSkill {
			r.toolCtx = ctx
		}
	case agent.EventToolResult:
		id, _ := ev.Data["call_id"].(string)
		span := r.tools[id]
		if span == nil {
			return
		}
		if isErr, _ := ev.Data["is_error"].(bool); isErr {
			code, _ := ev.Data["error_code"].(string)
			span.SetStatus(codes.Error, code)
		}
		span.End(trace.WithTimestamp(at))
		delete(r.tools, id)
		if tool, _ := ev.Data["tool"].(string); tool == agent.ActivateSkill {
			r.toolCtx = nil
		}
	case agent.EventSkillActivated, agent.EventSkillRefused:
		parent := r.toolCtx
		if parent == nil {
			parent = r.ctx
		}
		skill, _ := ev.Data["skill"].(string)
		_, span := r.tracer.Start(parent, SpanActivation, trace.WithTimestamp(at), trace.WithAttributes(attribute.String("skilld.skill", skill)))
		if ev.Type == agent.EventSkillRefused {
			reason, _ := ev.Data["reason"].(string)
			span.SetStatus(codes.Error, reason)
		}
		span.End(trace.WithTimestamp(at))
	case agent.EventTaskFailed:
		msg, _ := ev.Data["error"].(string)
		r.task.SetStatus(codes.Error, msg)
		if r.call != nil {
			r.call.SetStatus(codes.Error, msg)
		}
	}
}

// SandboxExec is left to the tool call's span, which already covers the
// command; its limit kill is marked there.
func (r *runTracer) SandboxExec(res *sandbox.Result, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if res == nil || res.Limit == "" {
		return
	}
	for _, span := range r.tools {
		span.SetAttributes(attribute.String("skilld.sandbox.limit", res.Limit))
	}
}

// Ended closes whatever is still open (a run suspended mid-call) and the
// task span.
func (r *runTracer) Ended(outcome string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.call != nil {
		r.call.End()
		r.call = nil
	}
	for id, span := range r.tools {
		span.End()
		delete(r.tools, id)
	}
	r.task.SetAttributes(attribute.String("skilld.outcome", outcome))
	r.task.End()
}
