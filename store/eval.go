package store

import (
	"context"

	"github.com/skilld/skilld"
)

// EvalQueries persist trigger eval results: one row per eval of a skill
// version (by digest) as an agent's catalog and a model present it.
type EvalQueries interface {
	// EvalResultCreate stores a result; ID and CreatedAt are set.
	EvalResultCreate(ctx context.Context, p *EvalResultCreateParams) (*skilld.EvalResult, error)
	// EvalResultList lists a workspace's results, newest first, narrowed
	// by whichever of agent, skill, digest and model are set.
	EvalResultList(ctx context.Context, p *EvalResultListParams) ([]*skilld.EvalResult, error)
}

type EvalResultCreateParams struct {
	Result skilld.EvalResult
}

type EvalResultListParams struct {
	WorkspaceID string
	AgentID     string
	SkillID     string
	SkillDigest string
	Model       string
	// Limit caps the rows (0: MaxPageSize).
	Limit int
}
