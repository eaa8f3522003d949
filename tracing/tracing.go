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
	switch p := ev.Payload.(type) {
	case agent.TaskStarted:
		r.task.SetAttributes(attribute.Int("skilld.tools_withheld", p.ToolsWithheld))
	case agent.LLMCallStarted:
		_, r.call = r.tracer.Start(r.ctx, SpanModelCall, trace.WithTimestamp(at), trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(attribute.String("gen_ai.provider.name", r.provider)))
	case agent.LLMCallCompleted:
		if r.call == nil {
			return
		}
		r.call.SetAttributes(attribute.Int("gen_ai.usage.input_tokens", p.Usage.PromptTokens), attribute.Int("gen_ai.usage.output_tokens", p.Usage.CompletionTokens),
			attribute.String("gen_ai.response.finish_reason", p.StopReason))
		r.call.End(trace.WithTimestamp(at))
		r.call = nil
	case agent.ToolCall:
		ctx, span := r.tracer.Start(r.ctx, SpanToolCall+" "+p.Tool, trace.WithTimestamp(at),
			trace.WithAttributes(attribute.String("gen_ai.tool.name", p.Tool), attribute.String("gen_ai.tool.call.id", p.CallID)))
		r.tools[p.CallID] = span
		if p.Tool == agent.ActivateSkill {
			r.toolCtx = ctx
		}
	case agent.ToolResult:
		span := r.tools[p.CallID]
		if span == nil {
			return
		}
		if p.IsError {
			span.SetStatus(codes.Error, p.ErrorCode)
		}
		span.End(trace.WithTimestamp(at))
		delete(r.tools, p.CallID)
		if p.Tool == agent.ActivateSkill {
			r.toolCtx = nil
		}
	case agent.SkillActivated:
		r.activation(p.Skill, "", at)
	case agent.SkillRefused:
		r.activation(p.Skill, p.Reason, at)
	case agent.TaskFailed:
		r.task.SetStatus(codes.Error, p.Error)
		if r.call != nil {
			r.call.SetStatus(codes.Error, p.Error)
		}
	}
}

// activation records an activation as a span under the activate_skill
// call that led to it; refused says why it was refused ("" when it was
// not).
func (r *runTracer) activation(skill, refused string, at time.Time) {
	parent := r.toolCtx
	if parent == nil {
		parent = r.ctx
	}
	_, span := r.tracer.Start(parent, SpanActivation, trace.WithTimestamp(at), trace.WithAttributes(attribute.String("skilld.skill", skill)))
	if refused != "" {
		span.SetStatus(codes.Error, refused)
	}
	span.End(trace.WithTimestamp(at))
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
