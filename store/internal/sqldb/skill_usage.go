package sqldb

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

func (q *Queries) SkillUsagePending(ctx context.Context, p *store.SkillUsagePendingParams) ([]store.SkillUsageTask, error) {
	limit := p.Limit
	if limit <= 0 || limit > store.MaxPageSize {
		limit = store.MaxPageSize
	}
	cond, args := `analytics_seq < last_seq AND status IN (`+placeholders(len(doneStatuses))+`)`, append([]any{}, doneStatuses...)
	if p.WorkspaceID != "" {
		cond, args = cond+` AND workspace_id = ?`, append(args, p.WorkspaceID)
	}
	rows, err := q.c.Query(ctx, `SELECT id, workspace_id, analytics_seq, last_seq FROM tasks WHERE `+cond+` ORDER BY id LIMIT ?`, append(args, limit)...)
	out, err := collect(rows, err, func(r Row) (store.SkillUsageTask, error) {
		var t store.SkillUsageTask
		return t, r.Scan(&t.ID, &t.WorkspaceID, &t.IndexedSeq, &t.LastSeq)
	})
	return out, internal(err, "listing the tasks to index")
}

// SkillUsageReplace moves the mark first: the update locks the task's
// row, so a concurrent indexer of the same task waits, then finds the mark
// moved and writes nothing.
func (q *Queries) SkillUsageReplace(ctx context.Context, p *store.SkillUsageReplaceParams) error {
	return q.tx(ctx, func(q *Queries) error {
		n, err := q.c.Exec(ctx, `UPDATE tasks SET analytics_seq = ? WHERE id = ? AND analytics_seq = ?`, p.Seq, p.TaskID, p.ExpectSeq)
		if err != nil {
			return internal(err, "marking task %s indexed", p.TaskID)
		}
		if n == 0 {
			var seq int64
			if err := q.c.QueryRow(ctx, `SELECT analytics_seq FROM tasks WHERE id = ?`, p.TaskID).Scan(&seq); err != nil {
				return notFound(err, "task %q", p.TaskID)
			}
			return &skilld.Error{Code: skilld.ECONFLICT, Err: store.ErrUsageMoved,
				Message: fmt.Sprintf("the skill usage of task %s is indexed to entry %d, not %d", p.TaskID, seq, p.ExpectSeq)}
		}
		if _, err := q.c.Exec(ctx, `DELETE FROM skill_usage WHERE task_id = ?`, p.TaskID); err != nil {
			return internal(err, "replacing the skill usage of task %s", p.TaskID)
		}
		for _, r := range p.Rows {
			reasons, err := json.Marshal(r.RefusalReasons)
			if err != nil || r.RefusalReasons == nil {
				reasons = []byte("{}")
			}
			var finished any
			if r.FinishedAt != nil {
				finished = r.FinishedAt.UTC()
			}
			_, err = q.c.Exec(ctx, `INSERT INTO skill_usage (task_id, skill_id, workspace_id, agent_id, skill_name, version, digest, offer, withheld_rule,
				activations, first_iteration, refusals, refusal_reasons, unloads, found, outcome, created_at, finished_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				p.TaskID, r.SkillID, r.WorkspaceID, r.AgentID, r.Name, r.Version, r.Digest, r.Offer, r.WithheldRule,
				r.Activations, r.FirstIteration, r.Refusals, string(reasons), r.Unloads, r.Found, r.Outcome, r.CreatedAt.UTC(), finished)
			if c := constraint(err, "unique"); c != nil {
				return &skilld.Error{Code: skilld.EINVALID, Message: fmt.Sprintf("skill %s is in the usage of task %s twice", r.SkillID, p.TaskID), Err: err}
			}
			if err != nil {
				return internal(err, "recording the skill usage of task %s", p.TaskID)
			}
		}
		return nil
	})
}

func (q *Queries) SkillUsageSummary(ctx context.Context, p *store.SkillUsageSummaryParams) ([]store.SkillUsageGroup, error) {
	where, args := []string{"workspace_id = ?"}, []any{p.WorkspaceID}
	if p.AgentID != "" {
		where, args = append(where, "agent_id = ?"), append(args, p.AgentID)
	}
	if p.SkillID != "" {
		where, args = append(where, "skill_id = ?"), append(args, p.SkillID)
	}
	if !p.From.IsZero() {
		where, args = append(where, "created_at >= ?"), append(args, p.From.UTC())
	}
	if !p.To.IsZero() {
		where, args = append(where, "created_at < ?"), append(args, p.To.UTC())
	}
	rows, err := q.c.Query(ctx, `SELECT skill_id, MAX(skill_name), version, digest, offer, withheld_rule, outcome, refusal_reasons,
			COUNT(*), CAST(SUM(CASE WHEN activations > 0 THEN 1 ELSE 0 END) AS BIGINT), CAST(SUM(CASE WHEN first_iteration > 0 THEN first_iteration ELSE 0 END) AS BIGINT),
			CAST(SUM(activations) AS BIGINT), CAST(SUM(refusals) AS BIGINT), CAST(SUM(unloads) AS BIGINT), CAST(SUM(found) AS BIGINT)
		FROM skill_usage WHERE `+strings.Join(where, " AND ")+`
		GROUP BY skill_id, version, digest, offer, withheld_rule, outcome, refusal_reasons
		ORDER BY skill_id, version, digest, offer, withheld_rule, outcome, refusal_reasons`, args...)
	out, err := collect(rows, err, func(r Row) (store.SkillUsageGroup, error) {
		var g store.SkillUsageGroup
		var reasons string
		err := r.Scan(&g.SkillID, &g.Name, &g.Version, &g.Digest, &g.Offer, &g.WithheldRule, &g.Outcome, &reasons,
			&g.Tasks, &g.TasksActivated, &g.FirstIterations, &g.Activations, &g.Refusals, &g.Unloads, &g.Found)
		if err == nil && reasons != "{}" {
			err = json.Unmarshal([]byte(reasons), &g.RefusalReasons)
		}
		return g, err
	})
	return out, internal(err, "summing the skill usage of workspace %q", p.WorkspaceID)
}
