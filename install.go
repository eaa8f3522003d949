package skilld

import "time"

// Install links a workspace to a catalog item: the workspace skill that
// holds it and the item version it is pinned to.
type Install struct {
	WorkspaceID string    `json:"workspace_id"`
	ItemID      string    `json:"item_id"`
	SkillID     string    `json:"skill_id"`
	Version     int       `json:"version"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}
