package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/tool"
	"github.com/skilld/skilld/skillsearch"
)

// Agent runs tasks with one configuration. It holds no state of a task:
// each Run has its own log (unless Config.Log names one), outputs and
// agent store, so one Agent may run several tasks at once.
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
	for _, gs := range cfg.GoSkills {
		switch {
		case gs == nil || gs.Name == "":
			return nil, skilld.Errorf(skilld.EINVALID, "agent: a Go skill has no name")
		case names[gs.Name]:
			return nil, skilld.Errorf(skilld.EINVALID, "agent: two attached skills are named %q", gs.Name)
		}
		names[gs.Name] = true
	}
	// The model addresses tools by name: a configured tool or a Go
	// skill's may not shadow a built-in one or another.
	builtin := []string{ActivateSkill, SearchSkills, ToolShell, ToolReadFile, ToolWriteFile, ToolListFiles, ToolReadToolOutput}
	tools := map[string]bool{}
	for _, n := range builtin {
		tools[n] = true
	}
	all := slices.Clone(cfg.Tools)
	for _, gs := range cfg.GoSkills {
		all = append(all, gs.Tools...)
	}
	for _, t := range all {
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
	// History holds earlier turns of the conversation, oldest first, put
	// before Input (a chat that goes on). Every tool call in it must be
	// followed by its result.
	History []model.Message
	// Resume holds what an earlier run of this task appended to its log
	// before it stopped, in order. The run replays it (answering recorded
	// side effects from it, appending nothing it holds) and goes on live
	// from its end. See replay.go.
	Resume []LogEntry
}

// run is the state of one task.
type run struct {
	cfg   Config
	task  Task
	yield func(Event, error) bool
	// stopped is set when the consumer stopped iterating or the log failed.
	stopped bool
	// rp replays a resumed task's log; resumed is set once the run went
	// live after it.
	rp      *replay
	resumed bool
	// store is the run's agent store: Go skills' values, every write in
	// the log.
	store *KVStore

	// Skills: the catalog's (disclosed), all by name, the withheld ones,
	// the Go skills, and those active now.
	disclosed []Skill
	byName    map[string]Skill
	withheld  []Skill
	goSkills  map[string]*GoSkill
	active    map[string]*activation
	res       residency // the placement: how active skills stay with the model
	// buf holds what the run wrote since its last side effect.
	buf logBuffer

	// Tools: the run's own (before policy); those of them the policy
	// offers and each Go skill's, settled once by prepare; what is offered
	// now, rebuilt when skills come and go.
	tools      []*tool.Tool
	base       []offeredTool
	skillTools map[string][]offeredTool
	offered    map[string]offeredTool
	specs      []model.ToolSpec
	toolTokens int

	// The system prompt without <current_context>, settled by prepare,
	// and how its catalog was rendered (nil: it has none).
	system       string
	systemTokens int
	catalog      *catalogFacts
	// cat is the catalog as planned before the tools were made (it
	// decides activate_skill's schema and search_skills), and searchIndex
	// the index search_skills built at its first call.
	cat         plannedCatalog
	searchIndex *skillsearch.Index
	// secrets are the values granted to the run's skills (nil: none),
	// redacted from everything the run writes.
	secrets *secrets

	// History: the view requests are built from, the correction of the
	// tokenizer's estimates, compaction's count and warning.
	view        *view
	scale       float64
	compactions int
	warned      bool
}

// Run executes the task and streams its events, each appended to the task
// log before it is yielded. The stream ends with task.completed or
// task.failed; an error is yielded only when the log itself fails.
func (a *Agent) Run(ctx context.Context, task Task) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		r := newRun(a.cfg, task, yield)
		r.main(ctx)
		r.flush(ctx)
	}
}

func newRun(cfg Config, task Task, yield func(Event, error) bool) *run {
	r := &run{cfg: cfg, task: task, yield: yield, byName: map[string]Skill{}, goSkills: map[string]*GoSkill{}, active: map[string]*activation{}}
	r.res = newResidency(r)
	r.view = &view{pin: r.res.pins()}
	if len(task.Resume) > 0 {
		r.rp = &replay{entries: task.Resume}
	}
	// What a run writes is its own: a log, outputs and an agent store
	// for this task alone, so one agent may run tasks at once.
	if r.cfg.Log == nil {
		r.cfg.Log = &MemoryLog{}
	}
	if r.cfg.Outputs == nil {
		r.cfg.Outputs = &MemoryOutputs{}
	}
	r.store = NewKVStore(cfg.Store.snapshot())
	r.store.persist = func(ctx context.Context, key string, value json.RawMessage) error {
		if _, ok := r.appendLog(ctx, KindStore, storeWrite{Key: key, Value: value}, nil); !ok {
			return skilld.Errorf(skilld.EUNAVAILABLE, "the task log did not take the store write")
		}
		return nil
	}
	return r
}

func (r *run) count(s string) int { return r.cfg.Tokenizer.Count(s) }

// emit appends an event to the log and hands it to the consumer.
func (r *run) emit(ctx context.Context, p Payload) {
	if r.stopped || (isProgress(p) && !r.rp.done()) {
		// A resumed run's progress is not the first run's: replay skips
		// the log's, and the run writes its own once it is live.
		return
	}
	ev := Event{Type: p.EventType(), TaskID: r.task.ID, Payload: r.secrets.redactPayload(p)}
	r.appendLog(ctx, KindEvent, ev, &ev)
}

// appendLog appends v to the task log as JSON; when that fails the run
// fails and ok is false. ev, if not nil, is handed to the consumer once
// the entry is in the log (see put: it may wait for the next side
// effect). While a resumed run replays its log, the entry is already
// there: its seq is returned, and nothing is written nor delivered. Once the
// run is suspended nothing is written at all, but what it wrote before
// goes to the log.
func (r *run) appendLog(ctx context.Context, kind string, v any, ev *Event) (seq int64, ok bool) {
	if Suspended(ctx) {
		r.flush(ctx)
		r.stopped = true
		return 0, false
	}
	if !r.rp.done() {
		e, found, err := r.rp.match(kind, v)
		if err != nil {
			r.diverged(ctx, err)
			return 0, false
		}
		if found {
			return e.Seq, true
		}
	}
	r.goLive(ctx)
	return r.put(ctx, kind, v, ev)
}

// goLive marks, once, where a resumed run stops replaying and acts again:
// a task.resumed event, written before the first live side effect.
func (r *run) goLive(ctx context.Context) {
	if r.rp == nil || r.resumed || !r.rp.done() {
		return
	}
	r.resumed = true
	if m, ok := r.cfg.Model.(model.Resumable); ok {
		m.Resume(r.rp.answered())
	}
	ev := Event{Type: EventTaskResumed, TaskID: r.task.ID, Payload: TaskResumed{Replayed: len(r.rp.entries)}}
	r.put(ctx, KindEvent, ev, &ev)
}

// diverged ends a replay that found the log does not match the run: the
// rest of the log is ignored and the task fails, at the log's end.
func (r *run) diverged(ctx context.Context, err error) {
	r.rp.pos = len(r.rp.entries)
	r.resumed = true // no task.resumed: the task does not go on
	r.finish(ctx, skilld.Errorf(skilld.EINTERNAL, "the task cannot be resumed: %v", err))
	r.stopped = true
}

// deliver hands an event to the consumer, noting when it stops reading
// (after which it is handed nothing more).
func (r *run) deliver(ev Event) {
	if r.buf.gone {
		return
	}
	if !r.yield(ev, nil) {
		r.stopped, r.buf.gone = true, true
	}
}

func (r *run) fail(err error) {
	if !r.stopped {
		r.stopped = true
		r.yield(Event{}, err)
	}
}

// addMessage appends a message to the view and the log. A message that
// holds an activation (skill set) is protected in transcript placement.
func (r *run) addMessage(ctx context.Context, m model.Message, skill string) {
	r.add(ctx, logMessage{Message: m, Skill: skill})
}

// add appends a message as the log stores it; its size is counted unless
// it is known (a recorded result: replay keeps the count the log has).
func (r *run) add(ctx context.Context, lm logMessage) {
	if r.stopped {
		return
	}
	m, skill := lm.Message, lm.Skill
	if lm.Tokens == 0 {
		lm.Tokens = messageTokens(r.cfg.Tokenizer, m)
	}
	e := entry{msg: m, tokens: lm.Tokens, skill: skill, protected: skill != ""}
	ev := messageEvent(r.task.ID, 0, time.Time{}, m, skill, e.tokens)
	seq, ok := r.appendLog(ctx, KindMessage, lm, &ev)
	if !ok {
		return
	}
	e.seq = seq
	r.view.add(e)
}

// logMessage is a message as the task log stores it: complete, so the
// transcript can be rebuilt from the log.
type logMessage struct {
	model.Message
	Skill  string `json:"skill,omitempty"`
	Tokens int    `json:"tokens"`
	// Usage and StopReason complete a model's answer, so that a resumed
	// run has all of it from this one entry.
	Usage      *model.Usage `json:"usage,omitempty"`
	StopReason string       `json:"stop_reason,omitempty"`
	// ErrorCode completes a tool error the same way; ExitCode a shell
	// call's result with its command's exit status.
	ErrorCode string `json:"error_code,omitempty"`
	ExitCode  *int   `json:"exit_code,omitempty"`
}

// messageEvent shows a message in the event stream. An activation's
// SKILL.md is replaced by its size: event payloads never carry skill
// bodies (the log keeps them).
func messageEvent(taskID string, seq int64, at time.Time, m model.Message, skill string, tokens int) Event {
	p := Message{Role: m.Role, Content: m.Content, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID, IsError: m.IsError, Tokens: tokens}
	if m.ToolCallID != "" {
		p.ToolName = m.ToolName
	}
	if skill != "" {
		p.Skill, p.Content = skill, fmt.Sprintf("[skill %s: %d tokens]", skill, tokens)
	}
	return Event{Type: EventMessage, TaskID: taskID, Seq: seq, Time: at, Payload: p}
}

// begin does what a run does before its first model call: task.started,
// the catalog of the disclosed skills, the tools the policy offers, the
// system prompt, the history and the user's input (activating a skill the
// input invokes with /name). It reports false when the run already ended.
func (r *run) begin(ctx context.Context) bool {
	// The built-in tools are made before task.started so that it can say
	// which tools the policy withholds; a failure to make them still
	// comes after task.started, as before.
	// Secrets are opened first: nothing is written before their values
	// can be redacted from it.
	err := r.loadSecrets(ctx)
	builtins, berr := r.builtinTools()
	if err == nil {
		err = berr
	}
	withheld := r.withheldTools(builtins)
	started := TaskStarted{InputChars: len(r.task.Input), Skills: len(r.cfg.Skills) + len(r.cfg.GoSkills), Window: r.cfg.Window,
		Placement: r.cfg.Placement, MaxLoaded: r.cfg.MaxLoaded, MaxMessages: r.cfg.MaxMessages, Compaction: !r.cfg.NoCompaction,
		ToolsWithheld: len(withheld), WithheldTools: withheld}
	if i := r.cfg.SandboxInfo; i != nil && r.cfg.Sandbox != nil {
		started.Rootfs = i.Rootfs
	}
	r.emit(ctx, started)
	if i := r.cfg.SandboxInfo; i != nil && r.cfg.Sandbox != nil {
		r.emit(ctx, SandboxReady{Info: *i})
	}
	for _, s := range r.cfg.Skills {
		r.byName[s.Name] = s
		if s.Withheld != "" {
			r.withheld = append(r.withheld, s)
			r.emit(ctx, SkillWithheld{Skill: s.Name, Rule: s.Withheld})
			continue
		}
		if s.NoModelInvocation {
			continue // invoked by the user only: not in the catalog
		}
		r.disclosed = append(r.disclosed, s)
	}
	for _, gs := range r.cfg.GoSkills {
		s := Skill{ID: "go:" + gs.Name, Name: gs.Name, Description: gs.Description}
		r.byName[gs.Name], r.goSkills[gs.Name] = s, gs
		r.disclosed = append(r.disclosed, s)
	}
	if err != nil {
		r.finish(ctx, err)
		return false
	}
	if len(r.disclosed) > 0 {
		r.planCatalog()
		r.tools = append(r.tools, r.activateTool())
		if r.cat.unlisted > 0 && !r.denied(ActivateSkill) {
			r.tools = append(r.tools, r.searchTool())
		}
	}
	r.tools = append(append(r.tools, builtins...), r.cfg.Tools...)
	r.prepare(ctx)
	if err := checkHistory(r.task.History); err != nil {
		r.finish(ctx, err)
		return false
	}
	for _, m := range r.task.History {
		r.addMessage(ctx, m, "")
	}
	r.addMessage(ctx, model.Message{Role: model.RoleUser, Content: r.userInvocation(ctx, r.task.Input)}, "")
	return !r.stopped
}

func (r *run) main(ctx context.Context) {
	if !r.begin(ctx) {
		return
	}
	for iter := 1; iter <= r.cfg.MaxIterations && !r.stopped; iter++ {
		if ctx.Err() != nil {
			r.finish(ctx, skilld.Errorf(skilld.EUNAVAILABLE, "task stopped: %v", context.Cause(ctx)))
			return
		}
		req, raw, err := r.fit(ctx)
		if err != nil {
			r.finish(ctx, err)
			return
		}
		rc := r.requestContext(req, raw)
		r.emit(ctx, LLMCallStarted{Iteration: iter, Messages: len(req.Messages), Tools: len(req.Tools), EstimatedTokens: r.corrected(raw), Context: &rc})
		resp, err := r.ask(ctx, StepModel, req)
		if err != nil {
			r.finish(ctx, err)
			return
		}
		r.observe(raw, resp.Usage.PromptTokens)
		msg := resp.Message
		msg.Role = model.RoleAssistant
		// The whole answer in one entry, before the event about it: a run
		// stopped after it resumes with the answer, not a second call.
		usage := resp.Usage
		r.add(ctx, logMessage{Message: msg, Usage: &usage, StopReason: resp.StopReason})
		r.emit(ctx, LLMCallCompleted{Iteration: iter, Usage: resp.Usage, StopReason: resp.StopReason, ToolCalls: len(resp.Message.ToolCalls)})
		if len(msg.ToolCalls) == 0 {
			if !r.stopped {
				r.emit(ctx, TaskCompleted{Output: msg.Content, Iterations: iter})
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

// maxCompactionsPerRequest bounds the summaries one request may wait for.
const maxCompactionsPerRequest = 3

// fit builds the next request within the effective window: compacting
// first when it would exceed CompactAt of it, warning once per cycle above
// WarnAt, and failing the task, before any call, when what must stay
// (the system prompt, the loaded or activated skills, the tools, protected
// messages) does not fit at all.
func (r *run) fit(ctx context.Context) (*model.Request, int, error) {
	eff := r.effectiveWindow()
	req, raw := r.request()
	for i := 0; !r.cfg.NoCompaction && i < maxCompactionsPerRequest && float64(r.corrected(raw)) > CompactAt*float64(eff); i++ {
		if !r.compact(ctx) {
			break
		}
		req, raw = r.request()
	}
	est := r.corrected(raw)
	if float64(est) > WarnAt*float64(eff) && !r.warned {
		r.warned = true
		r.emit(ctx, ContextWarning{Tokens: est, EffectiveWindow: eff, Share: float64(est) / float64(eff)})
	}
	if est > eff {
		protected := 0
		for _, g := range r.view.groups {
			if g.Protected {
				protected += g.Tokens
			}
		}
		return nil, 0, skilld.Errorf(skilld.ETOOLARGE, "the next request needs about %d tokens, more than the effective window of %d (%d less the %.0f%% kept for the answer): "+
			"the system prompt and skills take %d, the tools %d, protected skill content %d and the rest of the conversation %d; "+
			"use a model with a larger window, fewer or smaller skills, or turn compaction on",
			est, eff, r.cfg.Window, 100*OutputReserve, raw-r.toolTokens-r.view.tokens, r.toolTokens, protected, r.view.tokens-protected)
	}
	return req, raw, nil
}

// replaying reports whether the run was resumed and is still reading its
// log.
func (r *run) replaying() bool { return r.rp != nil && !r.resumed }

// ask gets the model's answer to req: the recorded one while replaying,
// otherwise a call, after the gate lets the step run.
func (r *run) ask(ctx context.Context, kind StepKind, req *model.Request) (*model.Response, error) {
	if r.replaying() {
		if resp, err, ok := r.rp.modelAnswer(); ok {
			if errors.Is(err, ErrDiverged) {
				r.diverged(ctx, err)
				return nil, err
			}
			return resp, err
		}
		r.goLive(ctx)
	}
	if err := r.gate(ctx, Step{Kind: kind}); err != nil {
		return nil, err
	}
	return model.Collect(ctx, r.cfg.Model, req)
}

// finish fails the task. The event carries err's public message and code;
// its full text only reaches the consumer (TaskFailed.Cause), which logs
// it: internal error text must not reach API clients.
func (r *run) finish(ctx context.Context, err error) {
	r.emit(ctx, NewTaskFailed(err))
}

// checkHistory refuses earlier turns a provider would refuse: a first
// message that is not the user's, a tool result without its call, a call
// without its result.
func checkHistory(msgs []model.Message) error {
	if len(msgs) > 0 && msgs[0].Role != model.RoleUser {
		return skilld.Errorf(skilld.EINVALID, "the conversation's history must start with a user message, not %s", msgs[0].Role)
	}
	open := map[string]bool{}
	for i, m := range msgs {
		switch m.Role {
		case model.RoleTool:
			if !open[m.ToolCallID] {
				return skilld.Errorf(skilld.EINVALID, "history message %d is the result of call %q, which no earlier message made", i, m.ToolCallID)
			}
			delete(open, m.ToolCallID)
		case model.RoleUser, model.RoleAssistant:
			if len(open) > 0 {
				return skilld.Errorf(skilld.EINVALID, "history message %d comes before the results of the calls before it", i)
			}
			for _, c := range m.ToolCalls {
				open[c.ID] = true
			}
		default:
			return skilld.Errorf(skilld.EINVALID, "history message %d has role %q", i, m.Role)
		}
	}
	if len(open) > 0 {
		return skilld.Errorf(skilld.EINVALID, "the history ends before the results of its last tool calls")
	}
	return nil
}
