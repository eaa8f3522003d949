package store

import (
	"context"

	"github.com/skilld/skilld"
)

// InstallQueries persist which catalog items a workspace installed.
type InstallQueries interface {
	// InstallCreate records an install. ECONFLICT when the workspace
	// already installed the item.
	InstallCreate(ctx context.Context, p *InstallCreateParams) (*skilld.Install, error)
	// InstallGet finds an install by item, else by skill. ENOTFOUND.
	InstallGet(ctx context.Context, p *InstallGetParams) (*skilld.Install, error)
	// InstallUpdate changes the pinned version. ENOTFOUND.
	InstallUpdate(ctx context.Context, p *InstallUpdateParams) (*skilld.Install, error)
}

type InstallCreateParams struct {
	WorkspaceID string
	ItemID      string
	SkillID     string
	Version     int
}

type InstallGetParams struct {
	WorkspaceID string
	ItemID      string
	SkillID     string
}

type InstallUpdateParams struct {
	WorkspaceID string
	ItemID      string
	Version     int
}
