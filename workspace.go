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
}
