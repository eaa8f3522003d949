package agent

import (
	"context"
	"encoding/json"
	"sync"
	"time"
)

// Log kinds of the entries a run appends.
const (
	KindEvent   = "event"
	KindMessage = "message"
)

// Log is the append-only task log a run writes every message and event to
// as it happens. Append returns the entry's sequence number: 1, 2, 3, …
// without gaps within a task. The store-backed log is the server's; the
// in-memory one is for library use.
type Log interface {
	Append(ctx context.Context, kind string, payload json.RawMessage) (seq int64, at time.Time, err error)
}

// LogEntry is one entry of a MemoryLog.
type LogEntry struct {
	Seq     int64
	Kind    string
	Payload json.RawMessage
	Time    time.Time
}

// MemoryLog is a Log kept in memory.
type MemoryLog struct {
	mu      sync.Mutex
	entries []LogEntry
}

// NewMemoryLog returns a log holding entries already (a task to resume).
func NewMemoryLog(entries []LogEntry) *MemoryLog {
	return &MemoryLog{entries: append([]LogEntry(nil), entries...)}
}

// Append adds an entry.
func (l *MemoryLog) Append(_ context.Context, kind string, payload json.RawMessage) (int64, time.Time, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := LogEntry{Seq: int64(len(l.entries)) + 1, Kind: kind, Payload: append(json.RawMessage(nil), payload...), Time: time.Now().UTC()}
	l.entries = append(l.entries, e)
	return e.Seq, e.Time, nil
}

// Entries returns a copy of the entries.
func (l *MemoryLog) Entries() []LogEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]LogEntry(nil), l.entries...)
}

// EventOf renders a task log entry as the event stream shows it: events as
// they were emitted, messages as "message" events, with an activation's
// SKILL.md replaced by its size.
func EventOf(taskID string, seq int64, at time.Time, kind string, payload json.RawMessage) (Event, error) {
	if kind == KindMessage {
		var m logMessage
		if err := json.Unmarshal(payload, &m); err != nil {
			return Event{}, err
		}
		return messageEvent(taskID, seq, at, m.Message, m.Skill, m.Tokens), nil
	}
	var e Event
	if err := json.Unmarshal(payload, &e); err != nil {
		return Event{}, err
	}
	e.TaskID, e.Seq, e.Time = taskID, seq, at
	return e, nil
}
