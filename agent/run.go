package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
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
	// Computed once per run: what every request repeats.
	catalog       string
	catalogTokens int
	instrTokens   int
	specs         map[string]specCache
}

// specCache is a tool's spec as sent to the model, with its token count.
type specCache struct {
	spec   model.ToolSpec
	tokens int
}

// Run executes the task and streams its events, each appended to the task
// log before it is yielded. The stream ends with task.completed or
// task.failed; an error is yielded only when the log itself fails.
func (a *Agent) Run(ctx context.Context, task Task) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		r := &run{cfg: a.cfg, task: task, yield: yield, byName: map[string]Skill{}, active: map[string]*activation{}, instrTokens: -1}
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
	payload, err := json.Marshal(Event{Type: typ, TaskID: r.task.ID, Data: data})
	if err != nil {
		r.fail(err)
		return
	}
	seq, at, err := r.cfg.Log.Append(context.WithoutCancel(ctx), KindEvent, payload)
	if err != nil {
		r.fail(fmt.Errorf("appending to the task log: %w", err))
		return
	}
	if !r.yield(Event{Type: typ, TaskID: r.task.ID, Seq: seq, Time: at, Data: data}, nil) {
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
	payload, err := json.Marshal(logMessage{Message: m, Skill: skill, Tokens: e.tokens})
	if err != nil {
		r.fail(err)
		return
	}
	seq, at, err := r.cfg.Log.Append(context.WithoutCancel(ctx), KindMessage, payload)
	if err != nil {
		r.fail(fmt.Errorf("appending to the task log: %w", err))
		return
	}
	if !r.yield(messageEvent(r.task.ID, seq, at, m, skill, e.tokens), nil) {
		r.stopped = true
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
		offered := r.offered()
		req, estimate := r.request(offered)
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
			r.callTool(ctx, offered, call)
		}
	}
	if !r.stopped {
		r.finish(ctx, skilld.Errorf(skilld.ETOOLARGE, "the task did not finish within %d model calls", r.cfg.MaxIterations))
	}
}

func (r *run) finish(ctx context.Context, err error) {
	r.emit(ctx, EventTaskFailed, map[string]any{"error": skilld.ErrorMessage(err), "code": skilld.ErrorCode(err), "detail": err.Error()})
}

// offered returns the tools the model may call in the next request: every
// tool the policy does not deny (control-flow tools always). When the
// policy denies activate_skill, the catalog goes with it.
func (r *run) offered() map[string]*tool.Tool {
	out := make(map[string]*tool.Tool, len(r.tools))
	for _, t := range r.tools {
		if controlFlow(t.Name) || r.cfg.Policy.Decide(t.Name).Decision != policy.Deny {
			out[t.Name] = t
		}
	}
	return out
}

// prepare renders what stays the same for the whole run: the catalog
// (the disclosed skills are fixed at start) and the tools' specs, each
// with its token count, so a request costs no rendering or tokenizing.
func (r *run) prepare(ctx context.Context) {
	r.specs = make(map[string]specCache, len(r.tools))
	for _, t := range r.tools {
		schema, _ := json.Marshal(t.Schema)
		spec := model.ToolSpec{Name: t.Name, Description: t.Description, Schema: schema}
		r.specs[t.Name] = specCache{spec: spec, tokens: r.count(t.Name) + r.count(t.Description) + r.count(string(schema))}
	}
	if len(r.disclosed) == 0 {
		return
	}
	budget := int(r.cfg.CatalogShare * float64(r.cfg.Window))
	text, level, tokens := renderCatalog(r.disclosed, budget, r.count)
	r.catalog, r.catalogTokens = text, tokens
	if level > catalogFull {
		r.emit(ctx, EventCatalogShortened, map[string]any{"level": catalogLevelNames[level], "tokens": tokens, "budget": budget, "over_budget": tokens > budget})
	}
}

// request builds the next model request: the instruction and (when
// activate_skill is offered) the catalog as the system prompt, the
// transcript, and the offered tools in a stable order. It returns the
// request's estimated size in tokens from the cached counts.
func (r *run) request(offered map[string]*tool.Tool) (*model.Request, int) {
	system := r.cfg.Instruction
	tokens := r.instructionTokens()
	if _, ok := offered[ActivateSkill]; ok && r.catalog != "" {
		system = strings.TrimSpace(system + "\n\n" + r.catalog)
		tokens += r.catalogTokens
	}
	req := &model.Request{Model: r.cfg.ModelName, System: system, MaxTokens: r.cfg.MaxTokens, Messages: make([]model.Message, len(r.transcript))}
	for i, e := range r.transcript {
		req.Messages[i] = e.msg
		tokens += e.tokens
	}
	for _, t := range r.tools {
		if _, ok := offered[t.Name]; ok {
			sc := r.specs[t.Name]
			req.Tools = append(req.Tools, sc.spec)
			tokens += sc.tokens
		}
	}
	return req, tokens
}

func (r *run) instructionTokens() int {
	if r.instrTokens < 0 {
		r.instrTokens = r.count(r.cfg.Instruction)
	}
	return r.instrTokens
}
