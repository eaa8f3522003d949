package skilld

import "time"

// SourceType says where a skill's content came from.
type SourceType string

const (
	SourceContent SourceType = "content" // inline files
	SourceZip     SourceType = "zip"     // an uploaded zip or tar archive
	SourceGitHub  SourceType = "github"  // imported from a GitHub repository
	SourcePath    SourceType = "path"    // read from a server-side folder
	SourceCatalog SourceType = "catalog" // installed from a catalog registry
)

// Valid reports whether s is a known source type.
func (s SourceType) Valid() bool {
	switch s {
	case SourceContent, SourceZip, SourceGitHub, SourcePath, SourceCatalog:
		return true
	}
	return false
}

// Skill is a workspace's skill: metadata only. Its files are in the package
// of its current version. Name and slug are each unique in the workspace;
// the slug is derived from the name once, at creation, and never changes.
type Skill struct {
	ID          string     `json:"id"`
	WorkspaceID string     `json:"workspace_id"`
	Name        string     `json:"name"`
	Slug        string     `json:"slug"`
	Description string     `json:"description"`
	SourceType  SourceType `json:"source_type"`
	SourceURL   string     `json:"source_url,omitempty"`
	// Version is the number of the current version (1 for a new skill).
	Version int `json:"version"`
	// Registry and Trust say where a skill from outside the workspace came
	// from, for the install policy: the catalog registry of an install, or
	// "github"/"community" for a GitHub import. Empty for skills the
	// workspace wrote itself.
	Registry string `json:"registry,omitempty"`
	Trust    Trust  `json:"trust,omitempty"`
	// CatalogItemID and CatalogVersion link an installed skill to the item
	// and item version it is pinned to. Forked is set once the workspace
	// edited the installed skill: pin updates no longer apply to it.
	CatalogItemID  string `json:"catalog_item_id,omitempty"`
	CatalogVersion int    `json:"catalog_version,omitempty"`
	Forked         bool   `json:"forked,omitempty"`
	// Read-only, filled on reads: the current version's package digest,
	// and for an install the item ("registry/name") and its newest version.
	Digest               string    `json:"digest,omitempty"`
	CatalogItem          string    `json:"catalog_item,omitempty"`
	CatalogLatestVersion int       `json:"catalog_latest_version,omitempty"`
	CreatedBy            string    `json:"created_by,omitempty"`
	UpdatedBy            string    `json:"updated_by,omitempty"`
	CreatedAt            time.Time `json:"created_at"`
	UpdatedAt            time.Time `json:"updated_at"`
}

// UpdateAvailable reports whether the catalog item a skill was installed
// from has a newer version that an update would bring in. A skill edited in
// the workspace (forked) no longer follows its item.
func (s *Skill) UpdateAvailable() bool {
	return s.CatalogItemID != "" && !s.Forked && s.CatalogLatestVersion > s.CatalogVersion
}
