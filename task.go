package skilld

import (
	"encoding/json"
	"time"
)

// TaskStatus is where a task is in its life.
type TaskStatus string

const (
	TaskQueued             TaskStatus = "queued"
	TaskRunning            TaskStatus = "running"
	TaskWaitingForApproval TaskStatus = "waiting_for_approval"
	TaskCompleted          TaskStatus = "completed"
	TaskFailed             TaskStatus = "failed"
	TaskCancelled          TaskStatus = "cancelled"
)

// Done reports whether the status is final.
func (s TaskStatus) Done() bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}

// Task is one run of an agent. Config is the snapshot fixed at start (every
// skill resolved to a package digest), so nothing changed later alters what
// the run reads.
type Task struct {
	ID          string          `json:"id"`
	WorkspaceID string          `json:"workspace_id"`
	AgentID     string          `json:"agent_id,omitempty"`
	Input       string          `json:"input"`
	Status      TaskStatus      `json:"status"`
	Config      json.RawMessage `json:"config,omitempty"`
	Error       string          `json:"error,omitempty"`
	LastSeq     int64           `json:"last_seq"`
	// QueuePosition is a queued task's place in line on the server that
	// will run it, from 1 (absent when not known or not queued).
	QueuePosition int        `json:"queue_position,omitempty"`
	CreatedBy     string     `json:"created_by,omitempty"`
	CreatedAt     time.Time  `json:"created_at"`
	UpdatedAt     time.Time  `json:"updated_at"`
	StartedAt     *time.Time `json:"started_at,omitempty"`
	FinishedAt    *time.Time `json:"finished_at,omitempty"`
}

// TaskLogEntry is one record of a task's append-only log: a message or an
// event. Seq numbers start at 1 and have no gaps within a task.
type TaskLogEntry struct {
	TaskID    string          `json:"task_id"`
	Seq       int64           `json:"seq"`
	Kind      string          `json:"kind"`
	Payload   json.RawMessage `json:"payload"`
	CreatedAt time.Time       `json:"time"`
}
