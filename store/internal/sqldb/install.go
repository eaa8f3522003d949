package sqldb

import (
	"context"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

const installColumns = `workspace_id, item_id, skill_id, version, created_at, updated_at`

func scanInstall(r Row) (*skilld.Install, error) {
	var i skilld.Install
	if err := r.Scan(&i.WorkspaceID, &i.ItemID, &i.SkillID, &i.Version, &i.CreatedAt, &i.UpdatedAt); err != nil {
		return nil, err
	}
	i.CreatedAt, i.UpdatedAt = utc(i.CreatedAt), utc(i.UpdatedAt)
	return &i, nil
}

func (q *Queries) InstallCreate(ctx context.Context, p *store.InstallCreateParams) (*skilld.Install, error) {
	t := now()
	i, err := scanInstall(q.c.ExecRow(ctx, `INSERT INTO installs (workspace_id, item_id, skill_id, version, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?) RETURNING `+installColumns, p.WorkspaceID, p.ItemID, p.SkillID, p.Version, t, t))
	if err := conflict(err, "the workspace already installed catalog item "+quote(p.ItemID)); err != nil {
		return nil, err
	}
	return i, internal(err, "installing catalog item %q", p.ItemID)
}

func (q *Queries) InstallGet(ctx context.Context, p *store.InstallGetParams) (*skilld.Install, error) {
	if p.ItemID != "" {
		i, err := scanInstall(q.c.QueryRow(ctx, `SELECT `+installColumns+` FROM installs WHERE workspace_id = ? AND item_id = ?`,
			p.WorkspaceID, p.ItemID))
		return i, notFound(err, "install of catalog item %q", p.ItemID)
	}
	i, err := scanInstall(q.c.QueryRow(ctx, `SELECT `+installColumns+` FROM installs WHERE workspace_id = ? AND skill_id = ?`,
		p.WorkspaceID, p.SkillID))
	return i, notFound(err, "install of skill %q", p.SkillID)
}

func (q *Queries) InstallUpdate(ctx context.Context, p *store.InstallUpdateParams) (*skilld.Install, error) {
	i, err := scanInstall(q.c.ExecRow(ctx, `UPDATE installs SET version = ?, updated_at = ? WHERE workspace_id = ? AND item_id = ?
		RETURNING `+installColumns, p.Version, now(), p.WorkspaceID, p.ItemID))
	return i, notFound(err, "install of catalog item %q", p.ItemID)
}
