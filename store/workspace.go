package store

import (
	"context"

	"github.com/skilld/skilld"
)

// WorkspaceQueries persist workspaces.
type WorkspaceQueries interface {
	// WorkspaceCreate inserts a workspace. ECONFLICT when the name is taken.
	WorkspaceCreate(ctx context.Context, p *WorkspaceCreateParams) (*skilld.Workspace, error)
	// WorkspaceGet finds a workspace by ID or, when ID is empty, by Name.
	// ENOTFOUND when there is none.
	WorkspaceGet(ctx context.Context, p *WorkspaceGetParams) (*skilld.Workspace, error)
	// WorkspaceList lists workspaces by name.
	WorkspaceList(ctx context.Context, p *WorkspaceListParams) ([]*skilld.Workspace, error)
	// WorkspaceUpdate changes a workspace's settings and returns it.
	// ENOTFOUND when there is none.
	WorkspaceUpdate(ctx context.Context, p *WorkspaceUpdateParams) (*skilld.Workspace, error)
	// WorkspaceDelete removes a workspace and everything it owns.
	// ENOTFOUND when there is none.
	WorkspaceDelete(ctx context.Context, p *WorkspaceDeleteParams) error
}

type WorkspaceCreateParams struct{ Name string }

type WorkspaceGetParams struct{ ID, Name string }

type WorkspaceListParams struct{ Page Page }

// WorkspaceUpdateParams are the settings to change: a nil field is left
// as it is. A negative task cap clears the workspace's own, so that the
// server's default applies again.
type WorkspaceUpdateParams struct {
	ID string
	// TaskRetention, when not nil, replaces the workspace's task
	// retention ("" for the server's).
	TaskRetention   *string
	MaxRunningTasks *int
	MaxQueuedTasks  *int
}

type WorkspaceDeleteParams struct{ ID string }
