package sqldb

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

func (q *Queries) PolicyGet(ctx context.Context, p *store.PolicyGetParams) (*skilld.Policy, error) {
	pol := &skilld.Policy{WorkspaceID: p.WorkspaceID, InstallRules: []skilld.InstallRule{}}
	var rules, tools string
	err := q.c.QueryRow(ctx, `SELECT install_rules, tools, updated_at FROM policies WHERE workspace_id = ?`, p.WorkspaceID).
		Scan(&rules, &tools, &pol.UpdatedAt)
	if isNoRows(err) {
		return pol, nil
	}
	if err != nil {
		return nil, internal(err, "reading policy")
	}
	pol.UpdatedAt = utc(pol.UpdatedAt)
	if err := json.Unmarshal([]byte(rules), &pol.InstallRules); err != nil {
		return nil, fmt.Errorf("decoding install rules of workspace %q: %w", p.WorkspaceID, err)
	}
	if err := json.Unmarshal([]byte(tools), &pol.Tools); err != nil {
		return nil, fmt.Errorf("decoding tool policy of workspace %q: %w", p.WorkspaceID, err)
	}
	return pol, nil
}

func (q *Queries) PolicyPut(ctx context.Context, p *store.PolicyPutParams) (*skilld.Policy, error) {
	rules := p.InstallRules
	if rules == nil {
		rules = []skilld.InstallRule{}
	}
	rj, err := json.Marshal(rules)
	if err != nil {
		return nil, err
	}
	tj, err := json.Marshal(p.Tools)
	if err != nil {
		return nil, err
	}
	t := now()
	_, err = q.c.Exec(ctx, `INSERT INTO policies (workspace_id, install_rules, tools, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (workspace_id) DO UPDATE SET install_rules = excluded.install_rules, tools = excluded.tools, updated_at = excluded.updated_at`,
		p.WorkspaceID, string(rj), string(tj), t)
	if err != nil {
		return nil, internal(err, "storing policy")
	}
	return &skilld.Policy{WorkspaceID: p.WorkspaceID, InstallRules: rules, Tools: p.Tools, UpdatedAt: t}, nil
}
