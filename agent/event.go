package agent

import (
	"encoding/json"
	"maps"
	"time"
)

// Event types. Every event and every message of a run is appended to the
// task log, in order, and its log sequence number is its Seq.
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
	EventSkillActivated    = "skill.activated"
	EventSkillRefused      = "skill.refused"
	EventSkillMaterialized = "skill.materialized"
	// A placed package's dependencies: preparing, then ready or failed.
	EventSkillEnvironment = "skill.environment"
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
)

// Event is one thing that happened in a run. It is JSON-encoded flat:
// {"type", "task_id", "seq", "time", and the Data fields}. Payloads never
// carry SKILL.md bodies or secrets; activations report sizes.
type Event struct {
	Type   string
	TaskID string
	Seq    int64
	Time   time.Time
	Data   map[string]any
}

// MarshalJSON flattens the event.
func (e Event) MarshalJSON() ([]byte, error) {
	m := make(map[string]any, len(e.Data)+4)
	maps.Copy(m, e.Data)
	m["type"], m["task_id"], m["seq"], m["time"] = e.Type, e.TaskID, e.Seq, e.Time.UTC().Format(time.RFC3339Nano)
	return json.Marshal(m)
}

// UnmarshalJSON reads a flat event back.
func (e *Event) UnmarshalJSON(b []byte) error {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	e.Type, _ = m["type"].(string)
	e.TaskID, _ = m["task_id"].(string)
	if seq, ok := m["seq"].(float64); ok {
		e.Seq = int64(seq)
	}
	if ts, ok := m["time"].(string); ok {
		e.Time, _ = time.Parse(time.RFC3339Nano, ts)
	}
	for _, k := range []string{"type", "task_id", "seq", "time"} {
		delete(m, k)
	}
	e.Data = m
	return nil
}
