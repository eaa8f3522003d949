package skilld

import "time"

// Member is a person or program known to a workspace, with a role.
type Member struct {
	ID          string    `json:"id"`
	WorkspaceID string    `json:"workspace_id"`
	Name        string    `json:"name"`
	Role        Role      `json:"role"`
	CreatedAt   time.Time `json:"created_at"`
}
