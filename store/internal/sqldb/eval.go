package sqldb

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

const evalColumns = `id, workspace_id, agent_id, skill_id, skill_name, skill_digest, model, precision, recall, runs, queries, rates, tokens, created_at`

func scanEval(r Row) (*skilld.EvalResult, error) {
	var e skilld.EvalResult
	var rates string
	if err := r.Scan(&e.ID, &e.WorkspaceID, &e.AgentID, &e.SkillID, &e.Skill, &e.SkillDigest, &e.Model, &e.Precision, &e.Recall,
		&e.Runs, &e.Queries, &rates, &e.Tokens, &e.CreatedAt); err != nil {
		return nil, err
	}
	e.CreatedAt = utc(e.CreatedAt)
	if err := json.Unmarshal([]byte(rates), &e.Rates); err != nil {
		return nil, fmt.Errorf("decoding the rates of eval result %q: %w", e.ID, err)
	}
	return &e, nil
}

func (q *Queries) EvalResultCreate(ctx context.Context, p *store.EvalResultCreateParams) (*skilld.EvalResult, error) {
	e := p.Result
	if e.Rates == nil {
		e.Rates = []skilld.EvalRate{}
	}
	rates, err := json.Marshal(e.Rates)
	if err != nil {
		return nil, err
	}
	out, err := scanEval(q.c.ExecRow(ctx, `INSERT INTO eval_results (`+evalColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING `+evalColumns,
		newID(), e.WorkspaceID, e.AgentID, e.SkillID, e.Skill, e.SkillDigest, e.Model, e.Precision, e.Recall, e.Runs, e.Queries, string(rates), e.Tokens, now()))
	return out, internal(err, "storing the eval of skill %q", e.Skill)
}

func (q *Queries) EvalResultList(ctx context.Context, p *store.EvalResultListParams) ([]*skilld.EvalResult, error) {
	cond, args := "workspace_id = ?", []any{p.WorkspaceID}
	for _, f := range []struct{ col, v string }{{"agent_id", p.AgentID}, {"skill_id", p.SkillID}, {"skill_digest", p.SkillDigest}, {"model", p.Model}} {
		if f.v != "" {
			cond, args = cond+" AND "+f.col+" = ?", append(args, f.v)
		}
	}
	limit := p.Limit
	if limit <= 0 || limit > store.MaxPageSize {
		limit = store.MaxPageSize
	}
	rows, err := q.c.Query(ctx, `SELECT `+evalColumns+` FROM eval_results WHERE `+cond+` ORDER BY created_at DESC, id DESC LIMIT ?`, append(args, limit)...)
	out, err := collect(rows, err, scanEval)
	return out, internal(err, "listing eval results")
}
