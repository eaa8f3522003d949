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
	// WorkspaceUsage sums what a workspace's tasks keep and counts its
	// tasks by status and its skills (StorageQuota is the workspace's own
	// or 0; the caller applies the server's default). ENOTFOUND.
	WorkspaceUsage(ctx context.Context, p *WorkspaceUsageParams) (*skilld.WorkspaceUsage, error)
	// WorkspaceStorageTop returns the usage of the n workspaces whose
	// tasks keep the most bytes, the most first (Tasks not counted).
	WorkspaceStorageTop(ctx context.Context, p *WorkspaceStorageTopParams) ([]*skilld.WorkspaceUsage, error)
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
	// StorageQuota, when not nil, replaces the workspace's own storage
	// quota in bytes (negative: none of its own).
	StorageQuota *int64
	// LenientLengths, when not nil, turns the workspace's leniency on
	// long skill fields on or off.
	LenientLengths *bool
}

type WorkspaceDeleteParams struct{ ID string }

type WorkspaceUsageParams struct{ ID string }

type WorkspaceStorageTopParams struct{ Limit int }
