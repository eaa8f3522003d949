package store

import (
	"context"
	"errors"

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
	// With ExpectedConfig, ECONFLICT (ErrAgentChanged) when the stored
	// config is another by then: a read-modify-write lost a race.
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
	// SkillID, when set, keeps only the agents that have that skill.
	SkillID string
	Page    Page
}

type AgentUpdateParams struct {
	WorkspaceID string
	ID          string
	Name        *string
	Config      *skilld.AgentConfig
	// ExpectedConfig is the config Config was computed from (a merge
	// patch applied to it); the update is refused when it has changed.
	ExpectedConfig *skilld.AgentConfig
	Skills         *[]skilld.AgentSkill
}

// ErrAgentChanged is the cause of an update refused because the agent's
// config is no longer ExpectedConfig.
var ErrAgentChanged = errors.New("the agent was changed meanwhile")

type AgentDeleteParams struct{ WorkspaceID, ID string }
