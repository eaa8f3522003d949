package store

import (
	"context"

	"github.com/skilld/skilld"
)

// AgentQueries persist agent configurations and their attached skills.
type AgentQueries interface {
	// AgentCreate inserts an agent. ECONFLICT when the name is taken in the
	// workspace; ENOTFOUND when an attached skill is not in the workspace.
	AgentCreate(ctx context.Context, p *AgentCreateParams) (*skilld.Agent, error)
	// AgentGet finds an agent by ID, else by Name. ENOTFOUND.
	AgentGet(ctx context.Context, p *AgentGetParams) (*skilld.Agent, error)
	AgentList(ctx context.Context, p *AgentListParams) ([]*skilld.Agent, int, error)
	// AgentUpdate changes what is set (Skills replaces the whole list).
	AgentUpdate(ctx context.Context, p *AgentUpdateParams) (*skilld.Agent, error)
	AgentDelete(ctx context.Context, p *AgentDeleteParams) error
}

type AgentCreateParams struct {
	WorkspaceID string
	Name        string
	Config      skilld.AgentConfig
	Skills      []skilld.AgentSkill
	CreatedBy   string
}

type AgentGetParams struct{ WorkspaceID, ID, Name string }

type AgentListParams struct {
	WorkspaceID string
	Page        Page
}

type AgentUpdateParams struct {
	WorkspaceID string
	ID          string
	Name        *string
	Config      *skilld.AgentConfig
	Skills      *[]skilld.AgentSkill
}

type AgentDeleteParams struct{ WorkspaceID, ID string }
