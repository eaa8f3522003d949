package store

import (
	"context"

	"github.com/skilld/skilld"
)

// SkillVersionQueries persist the immutable versions of skills.
type SkillVersionQueries interface {
	// SkillVersionCreate appends version Version+1 of a skill pointing at a
	// stored package and makes it current, atomically. With
	// ExpectedVersion set, ECONFLICT when the skill's current version is
	// another (someone else edited it first). ENOTFOUND when the skill is
	// missing from the workspace; EINVALID when the package is not stored.
	SkillVersionCreate(ctx context.Context, p *SkillVersionCreateParams) (*skilld.SkillVersion, error)
	// SkillVersionGet returns one version. ENOTFOUND when missing.
	SkillVersionGet(ctx context.Context, p *SkillVersionGetParams) (*skilld.SkillVersion, error)
	// SkillVersionList lists versions, newest first.
	SkillVersionList(ctx context.Context, p *SkillVersionListParams) ([]*skilld.SkillVersion, error)
}

type SkillVersionCreateParams struct {
	WorkspaceID     string
	SkillID         string
	Digest          string
	Message         string
	CreatedBy       string
	ExpectedVersion *int
}

type SkillVersionGetParams struct {
	WorkspaceID string
	SkillID     string
	Number      int
}

type SkillVersionListParams struct {
	WorkspaceID string
	SkillID     string
	Page        Page
}
