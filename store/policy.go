package store

import (
	"context"

	"github.com/skilld/skilld"
)

// PolicyQueries persist a workspace's install rules and tool policy.
type PolicyQueries interface {
	// PolicyGet returns the workspace policy, or an empty one (no rules)
	// when none was stored.
	PolicyGet(ctx context.Context, p *PolicyGetParams) (*skilld.Policy, error)
	// PolicyPut replaces the workspace policy.
	PolicyPut(ctx context.Context, p *PolicyPutParams) (*skilld.Policy, error)
}

type PolicyGetParams struct{ WorkspaceID string }

type PolicyPutParams struct {
	WorkspaceID  string
	InstallRules []skilld.InstallRule
	Tools        skilld.ToolPolicy
}
