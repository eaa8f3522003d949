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
}
