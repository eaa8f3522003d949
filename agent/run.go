package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/tool"
	"github.com/skilld/skilld/policy"
)

// Agent runs tasks with one configuration.
type Agent struct {
	cfg Config
}

// New validates cfg and returns an agent.
func New(cfg Config) (*Agent, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, s := range cfg.Skills {
		if names[s.Name] {
			return nil, skilld.Errorf(skilld.EINVALID, "agent: two attached skills are named %q", s.Name)
		}
		names[s.Name] = true
	}
	// The model addresses tools by name: a configured tool may not shadow
	// a built-in one or another configured one.
	builtin := []string{ActivateSkill, ToolShell, ToolReadFile, ToolWriteFile, ToolListFiles, ToolReadToolOutput}
	tools := map[string]bool{}
	for _, n := range builtin {
		tools[n] = true
	}
	for _, t := range cfg.Tools {
		if tools[t.Name] {
			return nil, skilld.Errorf(skilld.EINVALID, "agent: tool name %q is taken (built-in tools: %s)", t.Name, strings.Join(builtin, ", "))
		}
		tools[t.Name] = true
	}
	return &Agent{cfg: cfg}, nil
}

// Task is one piece of work for the agent.
type Task struct {
	ID    string
	Input string
}

// run is the state of one task.
type run struct {
	cfg   Config
	task  Task
	yield func(Event, error) bool
	// stopped is set when the consumer stopped iterating or the log failed.
	stopped bool

	transcript   []entry
	disclosed    []Skill
	byName       map[string]Skill
	active       map[string]*activation
	activeTokens int
	tools        []*tool.Tool // every tool of the run, before policy
	// Set once by prepare, since the tools, the policy and the disclosed
	// skills are fixed at start: what every request repeats.
	offered     map[string]*tool.Tool // the tools the model may call
	system      string
	specs       []model.ToolSpec // the offered tools, in a stable order
	fixedTokens int              // the system prompt's and the specs' tokens
}

// Run executes the task and streams its events, each appended to the task
// log before it is yielded. The stream ends with task.completed or
// task.failed; an error is yielded only when the log itself fails.
func (a *Agent) Run(ctx context.Context, task Task) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		r := &run{cfg: a.cfg, task: task, yield: yield, byName: map[string]Skill{}, active: map[string]*activation{}}
		r.main(ctx)
	}
}

func (r *run) count(s string) int { return r.cfg.Tokenizer.Count(s) }

// emit appends an event to the log and hands it to the consumer.
func (r *run) emit(ctx context.Context, typ string, data map[string]any) {
	if r.stopped {
		return
	}
	if data == nil {
		data = map[string]any{}
	}
	if seq, at, ok := r.appendLog(ctx, KindEvent, Event{Type: typ, TaskID: r.task.ID, Data: data}); ok {
		r.deliver(Event{Type: typ, TaskID: r.task.ID, Seq: seq, Time: at, Data: data})
	}
}

// appendLog appends v to the task log as JSON; when that fails the run
// fails and ok is false.
func (r *run) appendLog(ctx context.Context, kind string, v any) (seq int64, at time.Time, ok bool) {
	payload, err := json.Marshal(v)
	if err != nil {
		r.fail(err)
		return 0, time.Time{}, false
	}
	seq, at, err = r.cfg.Log.Append(context.WithoutCancel(ctx), kind, payload)
	if err != nil {
		r.fail(fmt.Errorf("appending to the task log: %w", err))
		return 0, time.Time{}, false
	}
	return seq, at, true
}

// deliver hands an event to the consumer, noting when it stops reading.
func (r *run) deliver(ev Event) {
	if !r.yield(ev, nil) {
		r.stopped = true
	}
}

func (r *run) fail(err error) {
	if !r.stopped {
		r.stopped = true
		r.yield(Event{}, err)
	}
}

// addMessage appends a message to the transcript and the log.
func (r *run) addMessage(ctx context.Context, m model.Message, skill string) {
	if r.stopped {
		return
	}
	e := entry{msg: m, tokens: messageTokens(r.cfg.Tokenizer, m), skill: skill}
	r.transcript = append(r.transcript, e)
	if seq, at, ok := r.appendLog(ctx, KindMessage, logMessage{Message: m, Skill: skill, Tokens: e.tokens}); ok {
		r.deliver(messageEvent(r.task.ID, seq, at, m, skill, e.tokens))
	}
}

// logMessage is a message as the task log stores it: complete, so the
// transcript can be rebuilt from the log.
type logMessage struct {
	model.Message
	Skill  string `json:"skill,omitempty"`
	Tokens int    `json:"tokens"`
}

// messageEvent shows a message in the event stream. An activation's
// SKILL.md is replaced by its size: event payloads never carry skill
// bodies (the log keeps them).
func messageEvent(taskID string, seq int64, at time.Time, m model.Message, skill string, tokens int) Event {
	data := map[string]any{"role": m.Role, "tokens": tokens}
	if skill != "" {
		data["skill"] = skill
		data["content"] = fmt.Sprintf("[skill %s: %d tokens]", skill, tokens)
	} else if m.Content != "" {
		data["content"] = m.Content
	}
	if len(m.ToolCalls) > 0 {
		data["tool_calls"] = m.ToolCalls
	}
	if m.ToolCallID != "" {
		data["tool_call_id"], data["tool_name"] = m.ToolCallID, m.ToolName
	}
	if m.IsError {
		data["is_error"] = true
	}
	return Event{Type: EventMessage, TaskID: taskID, Seq: seq, Time: at, Data: data}
}

func (r *run) main(ctx context.Context) {
	r.emit(ctx, EventTaskStarted, map[string]any{"input_chars": len(r.task.Input), "skills": len(r.cfg.Skills), "window": r.cfg.Window, "placement": r.cfg.Placement})
	if i := r.cfg.SandboxInfo; i != nil && r.cfg.Sandbox != nil {
		data := map[string]any{"provider": i.Provider, "isolated": i.Isolated, "enforced": i.Enforced}
		if i.Warning != "" {
			data["warning"] = i.Warning
		}
		r.emit(ctx, EventSandboxReady, data)
	}
	for _, s := range r.cfg.Skills {
		r.byName[s.Name] = s
		if s.Withheld != "" {
			r.emit(ctx, EventSkillWithheld, map[string]any{"skill": s.Name, "rule": s.Withheld})
			continue
		}
		r.disclosed = append(r.disclosed, s)
	}
	builtins, err := r.builtinTools()
	if err != nil {
		r.finish(ctx, err)
		return
	}
	if len(r.disclosed) > 0 {
		r.tools = append(r.tools, r.activateTool())
	}
	r.tools = append(append(r.tools, builtins...), r.cfg.Tools...)
	r.prepare(ctx)
	r.addMessage(ctx, model.Message{Role: model.RoleUser, Content: r.task.Input}, "")

	for iter := 1; iter <= r.cfg.MaxIterations && !r.stopped; iter++ {
		if err := ctx.Err(); err != nil {
			r.finish(ctx, skilld.Errorf(skilld.EUNAVAILABLE, "task cancelled: %v", err))
			return
		}
		req, estimate := r.request()
		r.emit(ctx, EventLLMCallStarted, map[string]any{"iteration": iter, "messages": len(req.Messages), "tools": len(req.Tools), "estimated_tokens": estimate})
		resp, err := model.Collect(ctx, r.cfg.Model, req)
		if err != nil {
			r.finish(ctx, err)
			return
		}
		r.emit(ctx, EventLLMCallCompleted, map[string]any{"iteration": iter, "usage": resp.Usage, "stop_reason": resp.StopReason, "tool_calls": len(resp.Message.ToolCalls)})
		msg := resp.Message
		msg.Role = model.RoleAssistant
		r.addMessage(ctx, msg, "")
		if len(msg.ToolCalls) == 0 {
			if !r.stopped {
				r.emit(ctx, EventTaskCompleted, map[string]any{"output": msg.Content, "iterations": iter})
			}
			return
		}
		for _, call := range msg.ToolCalls {
			if r.stopped {
				return
			}
			r.callTool(ctx, call)
		}
	}
	if !r.stopped {
		r.finish(ctx, skilld.Errorf(skilld.ETOOLARGE, "the task did not finish within %d model calls", r.cfg.MaxIterations))
	}
}

func (r *run) finish(ctx context.Context, err error) {
	r.emit(ctx, EventTaskFailed, map[string]any{"error": skilld.ErrorMessage(err), "code": skilld.ErrorCode(err), "detail": err.Error()})
}

// prepare settles what stays the same for the whole run, so a request
// costs no policy checks, rendering or tokenizing: the offered tools (every
// tool the policy does not deny, control-flow tools always) with their
// specs, and the system prompt, which is the instruction and, when
// activate_skill is offered, the catalog of the disclosed skills.
func (r *run) prepare(ctx context.Context) {
	r.offered = make(map[string]*tool.Tool, len(r.tools))
	r.system, r.fixedTokens = r.cfg.Instruction, r.count(r.cfg.Instruction)
	for _, t := range r.tools {
		if !controlFlow(t.Name) && r.cfg.Policy.Decide(t.Name).Decision == policy.Deny {
			continue
		}
		r.offered[t.Name] = t
		schema, _ := json.Marshal(t.Schema)
		r.specs = append(r.specs, model.ToolSpec{Name: t.Name, Description: t.Description, Schema: schema})
		r.fixedTokens += r.count(t.Name) + r.count(t.Description) + r.count(string(schema))
	}
	if len(r.disclosed) == 0 {
		return
	}
	budget := int(r.cfg.CatalogShare * float64(r.cfg.Window))
	text, level, tokens := renderCatalog(r.disclosed, budget, r.count)
	if level > catalogFull {
		r.emit(ctx, EventCatalogShortened, map[string]any{"level": catalogLevelNames[level], "tokens": tokens, "budget": budget, "over_budget": tokens > budget})
	}
	// When the policy denies activate_skill, the catalog goes with it.
	if _, ok := r.offered[ActivateSkill]; ok {
		r.system = strings.TrimSpace(r.system + "\n\n" + text)
		r.fixedTokens += tokens
	}
}

// request builds the next model request: the prepared system prompt and
// tools around the transcript. It returns the request's estimated size in
// tokens from the cached counts.
func (r *run) request() (*model.Request, int) {
	req := &model.Request{Model: r.cfg.ModelName, System: r.system, MaxTokens: r.cfg.MaxTokens,
		Messages: make([]model.Message, len(r.transcript)), Tools: slices.Clip(r.specs)}
	tokens := r.fixedTokens
	for i, e := range r.transcript {
		req.Messages[i] = e.msg
		tokens += e.tokens
	}
	return req, tokens
}
