package skilld

import "time"

// Token is an API credential. Only a hash of the secret is ever stored; the
// secret itself is shown once, when the token is created. An instance-admin
// token may also manage workspaces and the shared catalog.
type Token struct {
	ID            string     `json:"id"`
	WorkspaceID   string     `json:"workspace_id"`
	MemberID      string     `json:"member_id,omitempty"`
	Name          string     `json:"name"`
	Role          Role       `json:"role"`
	InstanceAdmin bool       `json:"instance_admin,omitempty"`
	Hash          string     `json:"-"`
	CreatedBy     string     `json:"created_by,omitempty"`
	CreatedAt     time.Time  `json:"created_at"`
	ExpiresAt     *time.Time `json:"expires_at,omitempty"`
	RevokedAt     *time.Time `json:"revoked_at,omitempty"`
	LastUsedAt    *time.Time `json:"last_used_at,omitempty"`
}

// Active reports whether the token may be used at time now.
func (t *Token) Active(now time.Time) bool {
	return t.RevokedAt == nil && (t.ExpiresAt == nil || now.Before(*t.ExpiresAt))
}
