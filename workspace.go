package skilld

import "time"

// Workspace is a tenant. Every skill, agent, task, member and token belongs
// to exactly one workspace; catalog items are shared by all of them.
type Workspace struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}
