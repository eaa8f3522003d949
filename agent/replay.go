package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/model"
)

// A run is deterministic given what its side effects returned: the
// model's answers, the tools' results, the approvers' decisions. Every one
// of those is in the task log before the run goes on. So a task that
// stopped (a crash, a shutdown, a worker lost) is resumed by running it
// again over its log: the run does what it did before, but each append
// finds its entry already there, and each side effect already recorded is
// answered from the log instead of being repeated — a model call is never
// made twice, a tool never run twice. State (transcript, active and loaded
// skills, the agent store, compaction's count, pending approvals) is
// rebuilt by the same code that built it the first time. When the log runs
// out the run is live again, from exactly where it stopped.
//
// Three things are re-executed rather than read back: activations (they
// load skills into the run's state and place packages in the sandbox, and
// both are idempotent), searches of skills (search_skills reads only the
// run's snapshot, so it answers and writes its event as it did), and, at the point the log ends, a tool call whose
// result never made it to the log, when the tool is idempotent. A call of
// any other tool in flight at the crash is answered with an error telling
// the model it was interrupted.

// EventTaskResumed marks where a resumed run went live again.
const EventTaskResumed = "task.resumed"

// ErrSuspended is the cause (context.WithCancelCause) of a run's context
// that stops the run without ending the task: nothing more is written to its
// log, so it can be resumed from there.
var ErrSuspended = errors.New("task suspended")

// Suspended reports whether ctx was cancelled to suspend the run.
func Suspended(ctx context.Context) bool { return errors.Is(context.Cause(ctx), ErrSuspended) }

// ErrDiverged is the cause of a resume that found the log does not match
// what the run does (the agent's configuration or the code changed in a
// way that alters the run): the task fails rather than go on from a state
// that was never the recorded one.
var ErrDiverged = errors.New("the task log does not match the run")

// CorruptEntryError is the cause of a resume that found an entry of the
// task log it cannot decode: what the entry recorded is lost, so the task
// fails, as on a divergence, but the error names the entry instead of
// describing it as something the run does not do.
type CorruptEntryError struct {
	Seq  int64
	Kind string
	Err  error
}

func (e *CorruptEntryError) Error() string {
	return fmt.Sprintf("task log entry %d (%s) is corrupt: %v", e.Seq, e.Kind, e.Err)
}

func (e *CorruptEntryError) Unwrap() error { return e.Err }

// replay is a cursor over the entries a run appended before it stopped.
type replay struct {
	entries []LogEntry
	pos     int
	// checked is set once every entry has been decoded (checkEntries).
	checked bool
}

// done reports whether every entry has been replayed.
func (p *replay) done() bool { return p == nil || p.skipUnreplayed() >= len(p.entries) }

// skipUnreplayed moves past the entries a run never replays, and returns
// the position: task.resumed markers, which the live part of an earlier
// resume wrote and no run code emits, and progress events, whose number
// depends on timing.
func (p *replay) skipUnreplayed() int {
	for p.pos < len(p.entries) && unreplayed(p.entries[p.pos]) {
		p.pos++
	}
	return p.pos
}

func unreplayed(e LogEntry) bool {
	if e.Kind != KindEvent {
		return false
	}
	switch eventType(e.Payload) {
	case EventTaskResumed:
		return true
	case EventSkillEnvironment:
		return isProgress(eventPayload(e))
	}
	return false
}

// isProgress reports whether p says how something under way is going:
// written as it happens, as often as it happens, and so not replayed.
func isProgress(p Payload) bool {
	env, ok := p.(SkillEnvironment)
	return ok && env.State == "building"
}

// answered counts the model calls the log answered: the turns, and the
// compactions that asked for a summary.
func (p *replay) answered() int {
	n, calling := 0, false // calling: an llm.call.started without its answer yet
	for _, e := range p.entries {
		if m, ok := message(e); ok && m.Role == model.RoleAssistant && calling {
			n, calling = n+1, false // not the earlier turns of a History
		} else if e.Kind == KindEvent {
			switch eventType(e.Payload) {
			case EventLLMCallStarted:
				calling = true
			case EventContextCompacted:
				if c, _ := eventPayload(e).(ContextCompacted); c.Asked {
					n++
				}
			}
		}
	}
	return n
}

// match consumes the entry an append of kind and v would write, when the
// log has one. It is a divergence when the entry there is something else.
func (p *replay) match(kind string, v any) (LogEntry, bool, error) {
	if p.done() {
		return LogEntry{}, false, nil
	}
	// A run's first act is an append (task.started), so the whole log is
	// checked here before anything is replayed.
	if !p.checked {
		p.checked = true
		if err := checkEntries(p.entries); err != nil {
			return LogEntry{}, false, err
		}
	}
	e := p.entries[p.pos]
	if want, got := describe(kind, v), describeEntry(e); want != got {
		return LogEntry{}, false, fmt.Errorf("%w: entry %d is %s, but the run writes %s there", ErrDiverged, e.Seq, got, want)
	}
	p.pos++
	return e, true, nil
}

// describe names what an append writes, at the level replay compares:
// the kind, an event's type, a message's role and call, a store key.
func describe(kind string, v any) string {
	switch x := v.(type) {
	case Event:
		return "event " + x.Type
	case logMessage:
		return "message " + roleOf(x.Message)
	case storeWrite:
		return "store " + x.Key
	}
	return kind
}

// checkEntries decodes every entry as replay reads it, so that the
// readers, which take an entry that does not decode for one of another
// kind, never meet one: the first that fails is a CorruptEntryError.
func checkEntries(entries []LogEntry) error {
	for _, e := range entries {
		var v any
		switch e.Kind {
		case KindEvent:
			v = &Event{}
		case KindMessage:
			v = &logMessage{}
		case KindStore:
			v = &storeWrite{}
		default:
			continue
		}
		if err := json.Unmarshal(e.Payload, v); err != nil {
			return &CorruptEntryError{Seq: e.Seq, Kind: e.Kind, Err: err}
		}
	}
	return nil
}

func describeEntry(e LogEntry) string {
	switch e.Kind {
	case KindEvent:
		return "event " + eventType(e.Payload)
	case KindMessage:
		var m logMessage
		json.Unmarshal(e.Payload, &m)
		return "message " + roleOf(m.Message)
	case KindStore:
		var w storeWrite
		json.Unmarshal(e.Payload, &w)
		return "store " + w.Key
	}
	return e.Kind
}

func roleOf(m model.Message) string {
	if m.Role == model.RoleTool {
		return "tool " + m.ToolCallID
	}
	return string(m.Role)
}

func eventType(payload json.RawMessage) string {
	var e struct {
		Type string `json:"type"`
	}
	json.Unmarshal(payload, &e)
	if e.Type == EventCatalogShortened {
		return EventCatalogTrimmed // the same event in an older log
	}
	return e.Type
}

// eventPayload decodes an event entry's payload (nil when it cannot be
// read).
func eventPayload(e LogEntry) Payload {
	var ev Event
	json.Unmarshal(e.Payload, &ev)
	return ev.Payload
}

// message decodes a message entry.
func message(e LogEntry) (logMessage, bool) {
	if e.Kind != KindMessage {
		return logMessage{}, false
	}
	var m logMessage
	return m, json.Unmarshal(e.Payload, &m) == nil
}

// modelAnswer returns the recorded answer of the model call the run is
// about to make: the assistant message (which records the call's usage and
// stop reason too), or the error that failed the task. ok is false when the log ends first (the
// call is to be made).
func (p *replay) modelAnswer() (resp *model.Response, err error, ok bool) {
	if p.done() {
		return nil, nil, false
	}
	e := p.entries[p.pos]
	if m, isMsg := message(e); isMsg && m.Role == model.RoleAssistant {
		resp = &model.Response{Message: m.Message, StopReason: m.StopReason}
		if m.Usage != nil {
			resp.Usage = *m.Usage
		}
		return resp, nil, true
	}
	if e.Kind == KindEvent && eventType(e.Payload) == EventTaskFailed {
		f, _ := eventPayload(e).(TaskFailed)
		return nil, recordedError(f), true
	}
	return nil, fmt.Errorf("%w: entry %d is %s where the model's answer should be", ErrDiverged, e.Seq, describeEntry(e)), true
}

// recordedError rebuilds the typed error a task.failed event recorded.
func recordedError(f TaskFailed) error {
	return &skilld.Error{Code: cmp.Or(f.Code, skilld.EINTERNAL), Message: f.Error}
}

// summary returns the recorded outcome of a compaction the run is about
// to ask the model for: the summary, or why there is none.
func (p *replay) summary() (text string, usage model.Usage, err error, ok bool) {
	if p.done() {
		return "", model.Usage{}, nil, false
	}
	e := p.entries[p.pos]
	if e.Kind != KindEvent || eventType(e.Payload) != EventContextCompacted {
		return "", model.Usage{}, fmt.Errorf("%w: entry %d is %s where a compaction should be", ErrDiverged, e.Seq, describeEntry(e)), true
	}
	c, _ := eventPayload(e).(ContextCompacted)
	if c.Summarized {
		return c.Summary, c.Usage, nil, true
	}
	return "", c.Usage, skilld.Errorf(skilld.EUNAVAILABLE, "%s", c.Error), true
}

// approval returns the recorded decision on a call, when the log has it.
func (p *replay) approval(callID string) (approved, ok bool) {
	if p.done() {
		return false, false
	}
	e := p.entries[p.pos]
	if e.Kind != KindEvent || eventType(e.Payload) != EventApprovalDecided {
		return false, false
	}
	d, _ := eventPayload(e).(ApprovalDecided)
	if d.CallID != callID {
		return false, false
	}
	return d.Approved, true
}

// toolResult finds the recorded result of a call the run is about to
// execute. The entries the tool wrote while it ran (store writes, an
// offloaded output) come first; they are consumed here, and store writes
// are handed to apply. found is false when the log ends before a result:
// the call was in flight when the run stopped.
func (p *replay) toolResult(callID string, apply func(storeWrite)) (out toolOutcome, found bool, err error) {
	for !p.done() {
		e := p.entries[p.pos]
		if m, ok := message(e); ok {
			if m.Role == model.RoleTool && m.ToolCallID == callID {
				return p.outcome(m), true, nil
			}
			return toolOutcome{}, false, fmt.Errorf("%w: entry %d is %s where the result of call %s should be", ErrDiverged, e.Seq, describeEntry(e), callID)
		}
		if e.Kind == KindStore {
			var w storeWrite
			if json.Unmarshal(e.Payload, &w) == nil {
				apply(w)
			}
		}
		p.pos++
	}
	return toolOutcome{}, false, nil
}

// recordedResult returns the recorded result of a call at the cursor,
// after a re-executed tool (an activation) replayed what it wrote.
func (p *replay) recordedResult(callID string) (toolOutcome, bool) {
	if p.done() {
		return toolOutcome{}, false
	}
	if m, ok := message(p.entries[p.pos]); ok && m.Role == model.RoleTool && m.ToolCallID == callID {
		return p.outcome(m), true
	}
	return toolOutcome{}, false
}

// outcome is a recorded tool message as a result.
func (p *replay) outcome(m logMessage) toolOutcome {
	return toolOutcome{content: m.Content, isError: m.IsError, code: m.ErrorCode, exitCode: m.ExitCode, tokens: m.Tokens, recorded: true}
}

// toolOutcome is what a tool call resulted in, as the model reads it.
type toolOutcome struct {
	content string
	isError bool
	code    string
	// exitCode is the exit status of the command the call ran, for a
	// shell call whose command ran.
	exitCode *int
	// tokens is the recorded size (0 when computed now); recorded is set
	// for outcomes read from the log.
	tokens   int
	recorded bool
}

// interrupted is the result of a call that was running when the task
// stopped and that cannot safely run again.
func interrupted(call model.ToolCall) toolOutcome {
	err := skilld.Errorf(skilld.EUNAVAILABLE, "the call of %s was interrupted: the task stopped while it ran and was resumed; it may or may not have taken effect, so check before calling it again", call.Name)
	return toolOutcome{content: "Error: " + err.Message, isError: true, code: err.Code}
}
