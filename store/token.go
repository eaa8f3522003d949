package store

import (
	"context"
	"time"

	"github.com/skilld/skilld"
)

// TokenQueries persist API tokens. Only hashes are stored.
type TokenQueries interface {
	// TokenCreate stores a token. ECONFLICT when the hash exists.
	TokenCreate(ctx context.Context, p *TokenCreateParams) (*skilld.Token, error)
	// TokenGetByHash finds a token by the hash of its secret, revoked or
	// not. ENOTFOUND when there is none.
	TokenGetByHash(ctx context.Context, p *TokenGetByHashParams) (*skilld.Token, error)
	TokenList(ctx context.Context, p *TokenListParams) ([]*skilld.Token, error)
	// TokenRevoke marks a token of the workspace revoked at At. ENOTFOUND
	// when the workspace has no such token.
	TokenRevoke(ctx context.Context, p *TokenRevokeParams) error
	// TokenTouch records the last use of a token.
	TokenTouch(ctx context.Context, p *TokenTouchParams) error
}

type TokenCreateParams struct {
	WorkspaceID   string
	MemberID      string
	Name          string
	Role          skilld.Role
	InstanceAdmin bool
	Hash          string
	CreatedBy     string
	ExpiresAt     *time.Time
}

type TokenGetByHashParams struct{ Hash string }

type TokenListParams struct {
	WorkspaceID string
	Page        Page
}

type TokenRevokeParams struct {
	WorkspaceID string
	ID          string
	At          time.Time
}

type TokenTouchParams struct {
	ID string
	At time.Time
}
