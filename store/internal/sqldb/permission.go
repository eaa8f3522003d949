package sqldb

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

func (q *Queries) PermissionApprovalPut(ctx context.Context, p *store.PermissionApprovalPutParams) (*store.PermissionApproval, error) {
	approved := p.Approved.Normalized()
	data, err := json.Marshal(approved)
	if err != nil {
		return nil, err
	}
	t := now()
	res, err := q.c.Exec(ctx, `INSERT INTO permission_approvals (workspace_id, skill_id, package_digest, approved, approved_by, approved_at)
		SELECT workspace_id, id, ?, ?, ?, ? FROM skills WHERE id = ? AND workspace_id = ?
		ON CONFLICT (skill_id, package_digest) DO UPDATE SET approved = excluded.approved, approved_by = excluded.approved_by, approved_at = excluded.approved_at`,
		p.Digest, string(data), p.ApprovedBy, t, p.SkillID, p.WorkspaceID)
	if err != nil {
		return nil, internal(err, "storing the permission approval of skill %s", p.SkillID)
	}
	if res == 0 {
		return nil, skilld.Errorf(skilld.ENOTFOUND, "skill %s not found", p.SkillID)
	}
	return &store.PermissionApproval{WorkspaceID: p.WorkspaceID, SkillID: p.SkillID, Digest: p.Digest, Approved: approved, ApprovedBy: p.ApprovedBy, ApprovedAt: t}, nil
}

func (q *Queries) PermissionApprovalList(ctx context.Context, p *store.PermissionApprovalListParams) ([]store.PermissionApproval, error) {
	rows, err := q.c.Query(ctx, `SELECT package_digest, approved, approved_by, approved_at FROM permission_approvals
		WHERE workspace_id = ? AND skill_id = ? ORDER BY approved_at DESC, package_digest`, p.WorkspaceID, p.SkillID)
	out, err := collect(rows, err, func(r Row) (store.PermissionApproval, error) {
		a := store.PermissionApproval{WorkspaceID: p.WorkspaceID, SkillID: p.SkillID}
		var approved string
		if err := r.Scan(&a.Digest, &approved, &a.ApprovedBy, &a.ApprovedAt); err != nil {
			return a, err
		}
		a.ApprovedAt = utc(a.ApprovedAt)
		if err := json.Unmarshal([]byte(approved), &a.Approved); err != nil {
			return a, fmt.Errorf("decoding the approval of %s: %w", a.Digest, err)
		}
		a.Approved = a.Approved.Normalized()
		return a, nil
	})
	return out, internal(err, "listing permission approvals of skill %s", p.SkillID)
}
