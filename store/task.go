package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/skilld/skilld"
)

// TaskQueries persist tasks and their append-only logs.
type TaskQueries interface {
	TaskCreate(ctx context.Context, p *TaskCreateParams) (*skilld.Task, error)
	// TaskPackagesRelease unpins a task's packages and returns their
	// digests (none the second time).
	TaskPackagesRelease(ctx context.Context, p *TaskPackagesReleaseParams) ([]string, error)
	// TaskOutputAdd records that a task stored a large output as the blob
	// digest (again: no-op). ENOTFOUND when the task is missing.
	TaskOutputAdd(ctx context.Context, p *TaskOutputParams) error
	// TaskOutputExists reports whether the task stored that output.
	TaskOutputExists(ctx context.Context, p *TaskOutputParams) (bool, error)
	// TaskGet finds a task; with WorkspaceID set, only in that workspace.
	// ENOTFOUND.
	TaskGet(ctx context.Context, p *TaskGetParams) (*skilld.Task, error)
	// TaskList lists a workspace's tasks, newest first.
	TaskList(ctx context.Context, p *TaskListParams) ([]*skilld.Task, int, error)
	// TaskUpdate changes what is set. With ExpectedStatus, ECONFLICT when
	// the task is in another status (a transition lost a race).
	TaskUpdate(ctx context.Context, p *TaskUpdateParams) (*skilld.Task, error)
	// TaskLogAppend appends an entry with the next sequence number (1, 2,
	// … with no gaps, even under concurrent appenders). ENOTFOUND when the
	// task is missing.
	TaskLogAppend(ctx context.Context, p *TaskLogAppendParams) (*skilld.TaskLogEntry, error)
	// TaskLogAppendBatch appends entries, in order, in one transaction:
	// all of them or none. ExpectSeq fences the first as TaskLogAppend's
	// does. EINVALID for an empty batch; ENOTFOUND when the task is
	// missing.
	TaskLogAppendBatch(ctx context.Context, p *TaskLogAppendBatchParams) ([]*skilld.TaskLogEntry, error)
	// TaskLogList returns entries with Seq > AfterSeq in order.
	TaskLogList(ctx context.Context, p *TaskLogListParams) ([]*skilld.TaskLogEntry, error)
	// TaskCountByStatus counts the tasks of every workspace by status, in
	// one query (statuses without tasks are absent).
	TaskCountByStatus(ctx context.Context) (map[skilld.TaskStatus]int, error)
	// TaskDelete removes a finished task with its log, its outputs and
	// any package pins it still holds, in one transaction, and returns the
	// digests those named, for the caller to free once nothing else
	// refers to them (rows first: a blob is never removed while a row
	// names it). ENOTFOUND when the task is missing (deleting twice is
	// ENOTFOUND the second time); ECONFLICT (ErrTaskNotFinished) when it
	// is queued, running or waiting, whose run still writes to it.
	TaskDelete(ctx context.Context, p *TaskDeleteParams) (*TaskDeleteResult, error)
	// TaskListFinished returns the IDs of a workspace's finished tasks
	// that finished before Before, the oldest first, at most Limit.
	TaskListFinished(ctx context.Context, p *TaskListFinishedParams) ([]string, error)
}

type TaskCreateParams struct {
	WorkspaceID string
	AgentID     string
	Input       string
	Status      skilld.TaskStatus
	Config      json.RawMessage
	CreatedBy   string
	// Packages are the package digests the task's snapshot names: pinned
	// (no package delete takes them) until TaskPackagesRelease. A digest
	// with no package is EINVALID.
	Packages []string
}

type TaskPackagesReleaseParams struct{ TaskID string }

// TaskOutputParams name a task's output; Size, for TaskOutputAdd, is its
// bytes, added to the task's stored output bytes the first time.
type TaskOutputParams struct {
	TaskID, Digest string
	Size           int64
}

type TaskGetParams struct{ WorkspaceID, ID string }

type TaskListParams struct {
	WorkspaceID string
	AgentID     string
	Status      skilld.TaskStatus
	Page        Page
}

type TaskUpdateParams struct {
	ID             string
	ExpectedStatus skilld.TaskStatus
	Status         skilld.TaskStatus
	Config         json.RawMessage
	// Output is a completed task's final answer.
	Output *string
	// Error and ErrorCode say why the task did not complete ("" for
	// neither once it did).
	Error      *string
	ErrorCode  *string
	StartedAt  *time.Time
	FinishedAt *time.Time
}

type TaskLogAppendParams struct {
	TaskID  string
	Kind    string
	Payload json.RawMessage
	// ExpectSeq, when set, is the sequence number the entry must get: the
	// append is ECONFLICT (ErrLogMoved) when the log has moved past it.
	// A run that is the task's only writer passes it, so that a run left
	// behind (a worker cut off from the cluster while a replacement took
	// the task over) cannot write into a log it no longer owns, and so
	// that an append whose commit went unacknowledged can be retried
	// without being written twice.
	ExpectSeq int64
	// PromptTokens and CompletionTokens, for an entry recording a model
	// call, are added to the task's usage in the append's transaction: the
	// totals are exactly those of the calls in the log, however often the
	// run was resumed or an append retried.
	PromptTokens     int64
	CompletionTokens int64
}

// TaskLogAppendBatchParams are entries appended together to one task's
// log: a run's entries between two side effects, which have to be durable
// only before the next one.
type TaskLogAppendBatchParams struct {
	TaskID string
	// ExpectSeq, when set, is the sequence number the first entry must get
	// (TaskLogAppendParams.ExpectSeq).
	ExpectSeq int64
	Entries   []TaskLogBatchEntry
}

// TaskLogBatchEntry is one entry of a batch: TaskLogAppendParams without
// the task and the fence.
type TaskLogBatchEntry struct {
	Kind             string
	Payload          json.RawMessage
	PromptTokens     int64
	CompletionTokens int64
}

// ErrLogMoved is the cause of an append refused because the log already
// has an entry at ExpectSeq.
var ErrLogMoved = errors.New("the task log has moved on")

// TaskDeleteParams name the task; with WorkspaceID set, only in that
// workspace.
type TaskDeleteParams struct{ WorkspaceID, ID string }

// TaskDeleteResult is what a deleted task referred to.
type TaskDeleteResult struct {
	// Outputs are the blob digests of its large outputs.
	Outputs []string
	// Packages are the package digests it had not released yet (a task
	// whose end did not get to release them).
	Packages []string
}

// ErrTaskNotFinished is the cause of a refused TaskDelete: the task's run
// is not over.
var ErrTaskNotFinished = errors.New("the task has not finished")

type TaskListFinishedParams struct {
	WorkspaceID string
	Before      time.Time
	Limit       int
}

type TaskLogListParams struct {
	TaskID   string
	AfterSeq int64
	Limit    int
}
