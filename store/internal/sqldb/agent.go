package sqldb

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

const agentColumns = `id, workspace_id, name, config, created_by, created_at, updated_at`

func scanAgent(r Row) (*skilld.Agent, error) {
	var a skilld.Agent
	var config string
	if err := r.Scan(&a.ID, &a.WorkspaceID, &a.Name, &config, &a.CreatedBy, &a.CreatedAt, &a.UpdatedAt); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(config), &a.Config); err != nil {
		return nil, fmt.Errorf("decoding config of agent %q: %w", a.ID, err)
	}
	a.CreatedAt, a.UpdatedAt = utc(a.CreatedAt), utc(a.UpdatedAt)
	a.Skills = []skilld.AgentSkill{}
	return &a, nil
}

func (q *Queries) AgentCreate(ctx context.Context, p *store.AgentCreateParams) (*skilld.Agent, error) {
	config, err := json.Marshal(p.Config)
	if err != nil {
		return nil, err
	}
	var out *skilld.Agent
	err = q.tx(ctx, func(q *Queries) error {
		id, t := newID(), now()
		_, err := q.c.Exec(ctx, `INSERT INTO agents (id, workspace_id, name, config, created_by, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, id, p.WorkspaceID, p.Name, string(config), p.CreatedBy, t, t)
		if err := conflict(err, "an agent named "+quote(p.Name)+" already exists in this workspace", "name"); err != nil {
			return err
		}
		if err != nil {
			return internal(err, "creating agent %q", p.Name)
		}
		if err := q.setAgentSkills(ctx, p.WorkspaceID, id, p.Skills); err != nil {
			return err
		}
		out, err = q.AgentGet(ctx, &store.AgentGetParams{WorkspaceID: p.WorkspaceID, ID: id})
		return err
	})
	return out, err
}

// setAgentSkills replaces an agent's attachments. Every skill must belong to
// the agent's workspace: foreign keys alone would accept another
// workspace's skill.
func (q *Queries) setAgentSkills(ctx context.Context, workspaceID, agentID string, skills []skilld.AgentSkill) error {
	if _, err := q.c.Exec(ctx, `DELETE FROM agent_skills WHERE agent_id = ?`, agentID); err != nil {
		return internal(err, "attaching skills")
	}
	seen := make(map[string]bool, len(skills))
	for i, s := range skills {
		if seen[s.SkillID] {
			return &skilld.Error{Code: skilld.EINVALID, Message: "skill " + quote(s.SkillID) + " is attached twice"}
		}
		seen[s.SkillID] = true
		n, err := q.c.Exec(ctx, `INSERT INTO agent_skills (agent_id, skill_id, position, version)
			SELECT ?, id, ?, ? FROM skills WHERE id = ? AND workspace_id = ?`, agentID, i, s.Version, s.SkillID, workspaceID)
		if err != nil {
			return internal(err, "attaching skill %q", s.SkillID)
		}
		if n == 0 {
			return notFound(ErrNoRows, "skill %q", s.SkillID)
		}
	}
	return nil
}

func (q *Queries) AgentGet(ctx context.Context, p *store.AgentGetParams) (*skilld.Agent, error) {
	key, val := "id", p.ID
	if val == "" {
		key, val = "name", p.Name
	}
	a, err := scanAgent(q.c.QueryRow(ctx, `SELECT `+agentColumns+` FROM agents WHERE workspace_id = ? AND `+key+` = ?`, p.WorkspaceID, val))
	if err != nil {
		return nil, notFound(err, "agent %q", val)
	}
	if err := q.loadAgentSkills(ctx, []*skilld.Agent{a}); err != nil {
		return nil, err
	}
	return a, nil
}

// loadAgentSkills fills the attachments of agents with one query.
func (q *Queries) loadAgentSkills(ctx context.Context, agents []*skilld.Agent) error {
	if len(agents) == 0 {
		return nil
	}
	byID := make(map[string]*skilld.Agent, len(agents))
	args := make([]any, len(agents))
	for i, a := range agents {
		byID[a.ID] = a
		args[i] = a.ID
	}
	rows, err := q.c.Query(ctx, `SELECT agent_id, skill_id, version FROM agent_skills WHERE agent_id IN (`+placeholders(len(agents))+`)
		ORDER BY agent_id, position`, args...)
	type row struct {
		agent string
		s     skilld.AgentSkill
	}
	list, err := collect(rows, err, func(r Row) (row, error) {
		var x row
		err := r.Scan(&x.agent, &x.s.SkillID, &x.s.Version)
		return x, err
	})
	if err != nil {
		return internal(err, "reading agent skills")
	}
	for _, x := range list {
		a := byID[x.agent]
		a.Skills = append(a.Skills, x.s)
	}
	return nil
}

func (q *Queries) AgentList(ctx context.Context, p *store.AgentListParams) ([]*skilld.Agent, int, error) {
	pg := p.Page.Normalize()
	cond, args := "workspace_id = ?", []any{p.WorkspaceID}
	if p.SkillID != "" {
		cond, args = cond+" AND id IN (SELECT agent_id FROM agent_skills WHERE skill_id = ?)", append(args, p.SkillID)
	}
	var total int
	if err := q.c.QueryRow(ctx, `SELECT COUNT(*) FROM agents WHERE `+cond, args...).Scan(&total); err != nil {
		return nil, 0, internal(err, "counting agents")
	}
	if pg.After != "" {
		cond, args, pg.Offset = cond+" AND name > ?", append(args, pg.After), 0
	}
	rows, err := q.c.Query(ctx, `SELECT `+agentColumns+` FROM agents WHERE `+cond+` ORDER BY name LIMIT ? OFFSET ?`,
		append(args, pg.Limit, pg.Offset)...)
	agents, err := collect(rows, err, scanAgent)
	if err != nil {
		return nil, 0, internal(err, "listing agents")
	}
	return agents, total, q.loadAgentSkills(ctx, agents)
}

func (q *Queries) AgentUpdate(ctx context.Context, p *store.AgentUpdateParams) (*skilld.Agent, error) {
	var out *skilld.Agent
	err := q.tx(ctx, func(q *Queries) error {
		// Lock the row first (SQLite's writer lock is taken anyway), so
		// that what is read below stays what ExpectedConfig is checked
		// against until the commit.
		n, err := q.c.Exec(ctx, `UPDATE agents SET updated_at = updated_at WHERE id = ? AND workspace_id = ?`, p.ID, p.WorkspaceID)
		if err != nil {
			return internal(err, "updating agent %q", p.ID)
		}
		if n == 0 {
			return notFound(ErrNoRows, "agent %q", p.ID)
		}
		cur, err := q.AgentGet(ctx, &store.AgentGetParams{WorkspaceID: p.WorkspaceID, ID: p.ID})
		if err != nil {
			return err
		}
		if p.ExpectedConfig != nil && !reflect.DeepEqual(cur.Config, *p.ExpectedConfig) {
			return &skilld.Error{Code: skilld.ECONFLICT, Message: "agent " + quote(cur.Name) + " was changed meanwhile", Err: store.ErrAgentChanged}
		}
		if p.Name != nil {
			cur.Name = *p.Name
		}
		if p.Config != nil {
			cur.Config = *p.Config
		}
		config, err := json.Marshal(cur.Config)
		if err != nil {
			return err
		}
		_, err = q.c.Exec(ctx, `UPDATE agents SET name = ?, config = ?, updated_at = ? WHERE id = ? AND workspace_id = ?`,
			cur.Name, string(config), now(), p.ID, p.WorkspaceID)
		if err := conflict(err, "an agent named "+quote(cur.Name)+" already exists in this workspace", "name"); err != nil {
			return err
		}
		if err != nil {
			return internal(err, "updating agent %q", p.ID)
		}
		if p.Skills != nil {
			if err := q.setAgentSkills(ctx, p.WorkspaceID, p.ID, *p.Skills); err != nil {
				return err
			}
		}
		out, err = q.AgentGet(ctx, &store.AgentGetParams{WorkspaceID: p.WorkspaceID, ID: p.ID})
		return err
	})
	return out, err
}

func (q *Queries) AgentDelete(ctx context.Context, p *store.AgentDeleteParams) error {
	n, err := q.c.Exec(ctx, `DELETE FROM agents WHERE id = ? AND workspace_id = ?`, p.ID, p.WorkspaceID)
	if err != nil {
		return internal(err, "deleting agent %q", p.ID)
	}
	if n == 0 {
		return notFound(ErrNoRows, "agent %q", p.ID)
	}
	return nil
}
