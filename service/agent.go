package service

import (
	"context"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/policy"
	"github.com/skilld/skilld/sandbox"
	"github.com/skilld/skilld/store"
)

// AgentSkillRef attaches a skill to an agent: a workspace skill (by ID or
// slug) or a catalog item ("registry/name"), which is installed first.
type AgentSkillRef struct {
	Skill   string `json:"skill,omitempty" jsonschema:"a workspace skill's ID or slug"`
	Item    string `json:"item,omitempty" jsonschema:"a catalog item as registry/name, installed into the workspace first"`
	Version int    `json:"version,omitempty" jsonschema:"pin to this skill version; follow the current version when omitted"`
}

type AgentParams struct {
	Name   string             `json:"name" jsonschema:"unique name of the agent in the workspace"`
	Config skilld.AgentConfig `json:"config" jsonschema:"instruction, model, tool policy and context settings"`
	Skills []AgentSkillRef    `json:"skills,omitempty" jsonschema:"skills attached to the agent"`
}

// MaxTaskTimeout is the longest an agent's task may be allowed to run.
const MaxTaskTimeout = 24 * time.Hour

// CreateAgent stores an agent configuration (members and up).
func (s *Service) CreateAgent(ctx context.Context, a Actor, p AgentParams) (*skilld.Agent, error) {
	if err := a.can(skilld.RoleMember); err != nil {
		return nil, err
	}
	name, err := DisplayName("name", p.Name)
	if err != nil {
		return nil, err
	}
	if err := checkAgentConfig(p.Config); err != nil {
		return nil, err
	}
	skills, err := s.resolveAgentSkills(ctx, a, p.Skills)
	if err != nil {
		return nil, err
	}
	ag, err := s.db.AgentCreate(ctx, &store.AgentCreateParams{WorkspaceID: a.WorkspaceID, Name: name, Config: p.Config, Skills: skills, CreatedBy: a.Name})
	if err != nil {
		return nil, err
	}
	s.event(ctx, a, a.WorkspaceID, "agent.created", ag.ID)
	return ag, nil
}

// resolveAgentSkills turns references into attachments, installing catalog
// items (which asks the install policy).
func (s *Service) resolveAgentSkills(ctx context.Context, a Actor, refs []AgentSkillRef) ([]skilld.AgentSkill, error) {
	out := make([]skilld.AgentSkill, 0, len(refs))
	for i, r := range refs {
		var id string
		switch {
		case r.Skill != "" && r.Item != "":
			return nil, invalidField("skills", "skills[%d]: give either skill or item, not both", i)
		case r.Item != "":
			sk, err := s.InstallSkill(ctx, a, InstallSkillParams{Item: r.Item})
			if err != nil {
				return nil, err
			}
			id = sk.ID
		case r.Skill != "":
			sk, err := s.skill(ctx, a, r.Skill)
			if err != nil {
				return nil, err
			}
			id = sk.ID
		default:
			return nil, invalidField("skills", "skills[%d]: give a skill or an item", i)
		}
		if r.Version < 0 {
			return nil, invalidField("skills", "skills[%d]: version must be positive", i)
		}
		out = append(out, skilld.AgentSkill{SkillID: id, Version: r.Version})
	}
	return out, nil
}

func checkAgentConfig(c skilld.AgentConfig) error {
	if err := policy.Validate("config.tools", c.Tools); err != nil {
		return err
	}
	if err := checkText("config.instruction", c.Instruction); err != nil {
		return err
	}
	if c.Timeout != "" {
		if d, err := time.ParseDuration(c.Timeout); err != nil || d < time.Second || d > MaxTaskTimeout {
			return invalidField("config.timeout", "timeout must be a duration from 1s to %s, such as 30m, not %q", MaxTaskTimeout, c.Timeout)
		}
	}
	switch c.Context.Placement {
	case "", "transcript", "context":
	default:
		return invalidField("config.context.placement", "placement must be transcript or context, not %q", c.Context.Placement)
	}
	for field, v := range map[string]float64{"config.context.entry_share": c.Context.EntryShare, "config.context.skills_share": c.Context.SkillsShare} {
		if v < 0 || v > 1 {
			return invalidField(field, "%s must be between 0 and 1, not %g", field, v)
		}
	}
	switch {
	case c.Context.Window < 0:
		return invalidField("config.context.window", "window must not be negative")
	case c.Context.MaxLoaded < 0:
		return invalidField("config.context.max_loaded", "max_loaded must not be negative")
	case c.Context.MaxLoaded > 0 && c.Context.Placement != "context":
		// Every knob takes effect or is refused: only context placement
		// loads and unloads skills.
		return invalidField("config.context.max_loaded", "max_loaded applies to context placement only; set placement to context or leave max_loaded out")
	case c.Context.MaxMessages < -1 || c.Context.MaxMessages == 1:
		return invalidField("config.context.max_messages", "max_messages must be 0 (the placement's default), -1 (no cap) or at least 2, not %d", c.Context.MaxMessages)
	}
	for _, ts := range c.Toolsets {
		if ts != skilld.ToolsetSkills {
			return invalidField("config.toolsets", "unknown toolset %q; the toolsets are: %s", ts, skilld.ToolsetSkills)
		}
	}
	if len(c.Sandbox.Env) > MaxSandboxEnv {
		return invalidField("config.sandbox.env", "at most %d variables, not %d", MaxSandboxEnv, len(c.Sandbox.Env))
	}
	for name, v := range c.Sandbox.Env {
		if err := sandbox.CheckEnv([]string{name + "=" + v}); err != nil {
			return invalidField("config.sandbox.env", "%s", skilld.ErrorMessage(err))
		}
		if len(v) > MaxSandboxEnvValue {
			return invalidField("config.sandbox.env", "%s is %d bytes, more than %d", name, len(v), MaxSandboxEnvValue)
		}
	}
	return nil
}

// Bounds of an agent's sandbox environment.
const (
	MaxSandboxEnv      = 64
	MaxSandboxEnvValue = 4096
)

type AgentRef struct {
	ID string `json:"id" path:"id" jsonschema:"the agent's ID or name"`
}

// agent finds an agent by ID, then by name.
func (s *Service) agent(ctx context.Context, a Actor, ref string) (*skilld.Agent, error) {
	ag, err := s.db.AgentGet(ctx, &store.AgentGetParams{WorkspaceID: a.WorkspaceID, ID: ref})
	if skilld.ErrorCode(err) == skilld.ENOTFOUND {
		ag, err = s.db.AgentGet(ctx, &store.AgentGetParams{WorkspaceID: a.WorkspaceID, Name: ref})
	}
	return ag, err
}

type GetAgentParams struct{ AgentRef }

// GetAgent returns an agent (viewers and up).
func (s *Service) GetAgent(ctx context.Context, a Actor, p GetAgentParams) (*skilld.Agent, error) {
	if err := a.can(skilld.RoleViewer); err != nil {
		return nil, err
	}
	return s.agent(ctx, a, p.ID)
}

type ListAgentsParams struct {
	Page      int    `json:"page,omitempty" query:"page"`
	PageSize  int    `json:"page_size,omitempty" query:"page_size"`
	PageToken string `json:"page_token,omitempty" query:"page_token" jsonschema:"the next_page_token of the previous page (instead of page)"`
}

type AgentPage struct {
	Items         []*skilld.Agent `json:"items"`
	Total         int             `json:"total"`
	Page          int             `json:"page"`
	PageSize      int             `json:"page_size"`
	NextPageToken string          `json:"next_page_token,omitempty"`
}

// ListAgents lists the workspace's agents by name (viewers and up).
func (s *Service) ListAgents(ctx context.Context, a Actor, p ListAgentsParams) (*AgentPage, error) {
	if err := a.can(skilld.RoleViewer); err != nil {
		return nil, err
	}
	query := filterDigest(a.WorkspaceID)
	pg, norm, err := keyed(Page{Page: p.Page, PageSize: p.PageSize}, p.PageToken, "agents", query)
	if err != nil {
		return nil, err
	}
	items, total, err := s.db.AgentList(ctx, &store.AgentListParams{WorkspaceID: a.WorkspaceID, Page: pg})
	if items == nil {
		items = []*skilld.Agent{}
	}
	out := &AgentPage{Items: items, Total: total, Page: norm.Page, PageSize: norm.PageSize}
	if len(items) > 0 {
		out.NextPageToken = nextToken(pg, len(items), total, "agents", query, items[len(items)-1].Name)
	}
	return out, err
}

type UpdateAgentParams struct {
	AgentRef
	Name   *string             `json:"name,omitempty"`
	Config *skilld.AgentConfig `json:"config,omitempty"`
	Skills *[]AgentSkillRef    `json:"skills,omitempty" jsonschema:"replaces the attached skills"`
}

// UpdateAgent changes what is given (members and up).
func (s *Service) UpdateAgent(ctx context.Context, a Actor, p UpdateAgentParams) (*skilld.Agent, error) {
	if err := a.can(skilld.RoleMember); err != nil {
		return nil, err
	}
	ag, err := s.agent(ctx, a, p.ID)
	if err != nil {
		return nil, err
	}
	up := &store.AgentUpdateParams{WorkspaceID: a.WorkspaceID, ID: ag.ID, Config: p.Config}
	if p.Name != nil {
		name, err := DisplayName("name", *p.Name)
		if err != nil {
			return nil, err
		}
		up.Name = &name
	}
	if p.Config != nil {
		if err := checkAgentConfig(*p.Config); err != nil {
			return nil, err
		}
	}
	if p.Skills != nil {
		skills, err := s.resolveAgentSkills(ctx, a, *p.Skills)
		if err != nil {
			return nil, err
		}
		up.Skills = &skills
	}
	ag, err = s.db.AgentUpdate(ctx, up)
	if err != nil {
		return nil, err
	}
	s.event(ctx, a, a.WorkspaceID, "agent.updated", ag.ID)
	return ag, nil
}

type DeleteAgentParams struct{ AgentRef }

// DeleteAgent deletes an agent (members and up); its past tasks remain.
func (s *Service) DeleteAgent(ctx context.Context, a Actor, p DeleteAgentParams) error {
	if err := a.can(skilld.RoleMember); err != nil {
		return err
	}
	ag, err := s.agent(ctx, a, p.ID)
	if err != nil {
		return err
	}
	if err := s.db.AgentDelete(ctx, &store.AgentDeleteParams{WorkspaceID: a.WorkspaceID, ID: ag.ID}); err != nil {
		return err
	}
	s.event(ctx, a, a.WorkspaceID, "agent.deleted", ag.ID)
	return nil
}
