package skilld

import (
	"encoding/json"
	"time"
)

// Event is an entry of a workspace's audit trail: who did what to which
// object (skill.created, policy.updated, token.revoked, …).
type Event struct {
	ID          int64           `json:"id"`
	WorkspaceID string          `json:"workspace_id"`
	Kind        string          `json:"kind"`
	Subject     string          `json:"subject,omitempty"`
	Actor       string          `json:"actor,omitempty"`
	Payload     json.RawMessage `json:"payload,omitempty"`
	CreatedAt   time.Time       `json:"created_at"`
}
