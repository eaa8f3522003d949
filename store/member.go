package store

import (
	"context"

	"github.com/skilld/skilld"
)

// MemberQueries persist workspace members.
type MemberQueries interface {
	// MemberCreate adds a member. ECONFLICT when the name is taken in the
	// workspace; ENOTFOUND when the workspace does not exist.
	MemberCreate(ctx context.Context, p *MemberCreateParams) (*skilld.Member, error)
	MemberList(ctx context.Context, p *MemberListParams) ([]*skilld.Member, error)
}

type MemberCreateParams struct {
	WorkspaceID string
	Name        string
	Role        skilld.Role
}

type MemberListParams struct {
	WorkspaceID string
	Page        Page
}
