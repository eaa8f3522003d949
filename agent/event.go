package agent

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"time"
)

// Event types. Every event and every message of a run is appended to the
// task log, in order, and its log sequence number is its Seq. Each type
// has its payload struct (eventtypes.go); docs/RUNTIME.md lists them.
const (
	EventTaskStarted       = "task.started"
	EventTaskCompleted     = "task.completed"
	EventTaskFailed        = "task.failed"
	EventMessage           = "message"
	EventLLMCallStarted    = "llm.call.started"
	EventLLMCallCompleted  = "llm.call.completed"
	EventToolCall          = "tool.call"
	EventToolResult        = "tool.result"
	EventToolOffloaded     = "tool.result.offloaded"
	EventToolDenied        = "tool.denied"
	EventApprovalRequested = "tool.approval.requested"
	EventApprovalDecided   = "tool.approval.decided"
	EventSkillWithheld     = "skill.withheld"
	EventSkillsSearched    = "skills.searched"
	EventSkillActivated    = "skill.activated"
	EventSkillRefused      = "skill.refused"
	EventSkillMaterialized = "skill.materialized"
	// A placed package's dependencies: preparing, then ready or failed.
	EventSkillEnvironment = "skill.environment"
	// The catalog was rendered with less detail to fit its budget.
	EventCatalogTrimmed = "catalog.trimmed"
	// EventCatalogShortened is what logs written before catalog.trimmed
	// call that event: read as catalog.trimmed, replayed as it.
	EventCatalogShortened = "catalog.shortened"
	EventSandboxReady     = "sandbox.ready"
	// A command's connection through the sandbox's proxy, and a refusal.
	EventSandboxEgress       = "sandbox.egress"
	EventSandboxEgressDenied = "sandbox.egress.denied"
	EventContextChanged      = "context.changed"
	EventSkillUnloaded       = "skill.unloaded"
	EventContextWarning      = "context.warning"
	EventContextCompacted    = "context.compacted"
	EventToolPreapproved     = "tool.preapproved"
	EventToolGranted         = "tool.granted"
)

// Payload is what an event says: one struct per event type, whose JSON
// fields are the event's fields. Readers switch on its concrete type.
type Payload interface {
	EventType() string
}

// Event is one thing that happened in a run. It is JSON-encoded flat:
// {"type", "task_id", "seq", "time", and the payload's fields}, the
// payload encoded by its struct, so every producer of an event writes it
// alike and every reader gets it back as that struct. Payloads never
// carry SKILL.md bodies or secrets; activations report sizes.
type Event struct {
	// Type is the payload's EventType; it stays a field so that readers
	// can match a name, and an event whose payload is missing still has
	// one.
	Type    string
	TaskID  string
	Seq     int64
	Time    time.Time
	Payload Payload
}

// eventHead is the part of an event every type has.
type eventHead struct {
	Type   string `json:"type"`
	TaskID string `json:"task_id"`
	Seq    int64  `json:"seq"`
	Time   string `json:"time"`
}

// MarshalJSON writes the head, then the payload's own encoding spliced in
// after it.
func (e Event) MarshalJSON() ([]byte, error) {
	typ := e.Type
	if e.Payload != nil {
		typ = e.Payload.EventType()
	}
	head, err := json.Marshal(eventHead{Type: typ, TaskID: e.TaskID, Seq: e.Seq, Time: e.Time.UTC().Format(time.RFC3339Nano)})
	if err != nil || e.Payload == nil {
		return head, err
	}
	body, err := json.Marshal(e.Payload)
	if err != nil {
		return nil, fmt.Errorf("encoding a %s event: %w", typ, err)
	}
	if len(body) < 2 || body[0] != '{' {
		return nil, fmt.Errorf("encoding a %s event: its payload is not a JSON object", typ)
	}
	if len(body) == 2 { // {}
		return head, nil
	}
	out := append(head[:len(head)-1], ',')
	return append(out, body[1:]...), nil
}

// UnmarshalJSON reads a flat event back into the payload struct of its
// type. An event of a type this build does not know, or whose fields do
// not fit its struct (a log written by another version), keeps its fields
// as an UnknownPayload, which encodes back to them.
func (e *Event) UnmarshalJSON(b []byte) error {
	var head struct {
		Type   string  `json:"type"`
		TaskID string  `json:"task_id"`
		Seq    float64 `json:"seq"`
		Time   string  `json:"time"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return err
	}
	e.Type, e.TaskID, e.Seq = head.Type, head.TaskID, int64(head.Seq)
	e.Time, _ = time.Parse(time.RFC3339Nano, head.Time)
	e.Payload = decodePayload(head.Type, b)
	return nil
}

// decodePayload decodes the fields of a flat event: the head's keys are
// no payload's fields (a test holds them to that), so they are ignored.
func decodePayload(typ string, b []byte) Payload {
	if t, ok := payloadTypes()[typ]; ok {
		v := reflect.New(t)
		if json.Unmarshal(b, v.Interface()) == nil {
			return v.Elem().Interface().(Payload)
		}
	}
	u := UnknownPayload{Type: typ}
	json.Unmarshal(b, &u.Fields)
	for _, k := range []string{"type", "task_id", "seq", "time"} {
		delete(u.Fields, k)
	}
	return u
}

// UnknownPayload holds the fields of an event this build cannot read as
// one of its payloads, as they were, so that it passes through unchanged.
type UnknownPayload struct {
	Type   string
	Fields map[string]json.RawMessage
}

func (u UnknownPayload) EventType() string { return u.Type }

// MarshalJSON writes the fields as they were read.
func (u UnknownPayload) MarshalJSON() ([]byte, error) {
	if len(u.Fields) == 0 {
		return []byte("{}"), nil
	}
	return json.Marshal(u.Fields)
}

// payloadTypes maps each event type to its payload struct, for decoding.
var payloadTypes = sync.OnceValue(func() map[string]reflect.Type {
	m := map[string]reflect.Type{}
	for _, p := range Payloads() {
		m[p.EventType()] = reflect.TypeOf(p)
	}
	m[EventCatalogShortened] = m[EventCatalogTrimmed]
	return m
})
