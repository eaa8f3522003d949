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
	// Output is the final answer of a completed task (its task.completed
	// event's output).
	Output string `json:"output,omitempty"`
	// Error says why a failed or cancelled task did not complete.
	Error *TaskError `json:"error,omitempty"`
	// Usage sums what the task's model calls cost, as the run logged
	// them, so far while it runs.
	Usage TaskUsage `json:"usage"`
	// Stored is what the task keeps in storage: its log and its large
	// tool outputs, counted against its budget and its workspace's quota.
	Stored  TaskStorage `json:"stored"`
	LastSeq int64       `json:"last_seq"`
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

// TaskError is why a task ended without completing. Code is the error code
// of the failure (EINVALID, EUNAVAILABLE, …), or TaskCancelledCode.
type TaskError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// TaskCancelledCode is the TaskError code of a cancelled task.
const TaskCancelledCode = "cancelled"

// TaskStorage is the bytes a task keeps: its log entries and the large tool
// outputs it stored (each output once).
type TaskStorage struct {
	LogBytes    int64 `json:"log_bytes"`
	OutputBytes int64 `json:"output_bytes"`
}

// Total is all the bytes the task keeps.
func (s TaskStorage) Total() int64 { return s.LogBytes + s.OutputBytes }

// TaskUsage is what a task's model calls cost, in tokens, summed over every
// call of the task: its turns and the summaries of compactions.
type TaskUsage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
}
