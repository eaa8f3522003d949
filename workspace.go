package skilld

import "time"

// Workspace is a tenant. Every skill, agent, task, member and token belongs
// to exactly one workspace; catalog items are shared by all of them.
type Workspace struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// TaskRetention, when set, is how long the workspace keeps its
	// finished tasks, as a Go duration ("720h"; "0s" keeps them forever),
	// in place of the server's --task-retention. Empty: the server's.
	TaskRetention string    `json:"task_retention,omitempty"`
	CreatedAt     time.Time `json:"created_at"`
	// MaxRunningTasks and MaxQueuedTasks are the workspace's own caps on
	// its tasks, set by an instance admin; nil when the server's defaults
	// apply (0: no cap of the workspace's own).
	MaxRunningTasks *int `json:"max_running_tasks,omitempty"`
	MaxQueuedTasks  *int `json:"max_queued_tasks,omitempty"`
	// StorageQuota is the workspace's own bound on the bytes its tasks
	// keep (logs and large tool outputs), set by an instance admin; nil
	// when the server's default applies (0: no quota of its own).
	StorageQuota *int64 `json:"storage_quota,omitempty"`
	// LenientLengths stores skills whose description or compatibility is
	// over the specification's length limit, with a warning, instead of
	// refusing them.
	LenientLengths bool `json:"lenient_lengths,omitempty"`
}

// WorkspaceUsage is what a workspace holds and runs at one moment.
type WorkspaceUsage struct {
	WorkspaceID string `json:"workspace_id"`
	// Workspace is the workspace's name.
	Workspace string `json:"workspace"`
	Skills    int    `json:"skills"`
	// Tasks counts the workspace's tasks by status; TasksTotal is their sum.
	Tasks      map[TaskStatus]int `json:"tasks"`
	TasksTotal int                `json:"tasks_total"`
	// Stored sums what its tasks keep; StoredBytes is its total.
	Stored      TaskStorage `json:"stored"`
	StoredBytes int64       `json:"stored_bytes"`
	// StorageQuota is the bound that applies (the workspace's own or the
	// server's; 0: none), and QuotaSource says which.
	StorageQuota int64  `json:"storage_quota"`
	QuotaSource  string `json:"quota_source"`
}
