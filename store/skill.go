package store

import (
	"context"

	"github.com/skilld/skilld"
)

// SkillQueries persist workspace skills.
type SkillQueries interface {
	// SkillCreate inserts a skill with Version 0 (no version yet; add one
	// with SkillVersionCreate in the same transaction). The slug is derived
	// from the name with Slugify; when taken, "-2" … "-999" are tried, then
	// ECONFLICT wrapping ErrConflictingSlugs. ECONFLICT when the name is
	// taken in the workspace.
	SkillCreate(ctx context.Context, p *SkillCreateParams) (*skilld.Skill, error)
	// SkillGet finds a workspace's skill by ID, else by Name, else by Slug.
	// ENOTFOUND when there is none in that workspace.
	SkillGet(ctx context.Context, p *SkillGetParams) (*skilld.Skill, error)
	// SkillList pages through a workspace's skills ordered by name, then,
	// with IncludeCatalog, through the catalog items the workspace has not
	// installed, ordered by registry and name. Total counts both.
	SkillList(ctx context.Context, p *SkillListParams) (*SkillListResult, error)
	// SkillListRevision returns a value that changes (within the
	// transaction that makes the change) whenever anything SkillList
	// shows for the workspace may change: its skills, its installs, the
	// catalog. A page read after the revision stands while the revision
	// does. ENOTFOUND when the workspace does not exist.
	SkillListRevision(ctx context.Context, workspaceID string) (string, error)
	// SkillUpdate changes the fields that are set and returns the skill.
	// The slug never changes. ENOTFOUND when missing; ECONFLICT when a new
	// name is taken.
	SkillUpdate(ctx context.Context, p *SkillUpdateParams) (*skilld.Skill, error)
	// SkillDelete removes a skill with its versions, install and agent
	// attachments. ENOTFOUND when missing.
	SkillDelete(ctx context.Context, p *SkillDeleteParams) error
}

type SkillCreateParams struct {
	WorkspaceID    string
	Name           string
	Description    string
	SourceType     skilld.SourceType
	SourceURL      string
	Registry       string
	Trust          skilld.Trust
	CatalogItemID  string
	CatalogVersion int
	CreatedBy      string
}

type SkillGetParams struct {
	WorkspaceID string
	ID          string
	Name        string
	Slug        string
}

type SkillListParams struct {
	WorkspaceID string
	// Search matches a case-insensitive substring of name or description.
	Search string
	// SourceType, when set, keeps only skills of that source.
	SourceType skilld.SourceType
	// FromCatalog, when set, keeps only installed (true) or not installed
	// (false) workspace skills.
	FromCatalog *bool
	// IncludeCatalog appends catalog items not installed in the workspace.
	IncludeCatalog bool
	Page           Page
	// After, when set, starts the page after that row instead of at
	// Page.Offset (a keyset page: as fast at any depth as the first).
	After *SkillListCursor
}

// SkillListCursor is the last row of a page: the skill named Name, or, with
// Catalog, the catalog item Registry/Name.
type SkillListCursor struct {
	Catalog        bool
	Registry, Name string
}

// SkillListItem is one row of a skill list: a workspace skill, or a catalog
// item the workspace could install (exactly one is set).
type SkillListItem struct {
	Skill   *skilld.Skill
	Catalog *skilld.CatalogItem
}

type SkillListResult struct {
	Items []SkillListItem
	Total int
}

type SkillUpdateParams struct {
	WorkspaceID    string
	ID             string
	Name           *string
	Description    *string
	SourceURL      *string
	CatalogVersion *int
	Forked         *bool
	UpdatedBy      string
}

type SkillDeleteParams struct{ WorkspaceID, ID string }
