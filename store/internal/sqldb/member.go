package sqldb

import (
	"context"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

const memberColumns = `id, workspace_id, name, role, created_at`

func scanMember(r Row) (*skilld.Member, error) {
	var m skilld.Member
	if err := r.Scan(&m.ID, &m.WorkspaceID, &m.Name, &m.Role, &m.CreatedAt); err != nil {
		return nil, err
	}
	m.CreatedAt = utc(m.CreatedAt)
	return &m, nil
}

func (q *Queries) MemberCreate(ctx context.Context, p *store.MemberCreateParams) (*skilld.Member, error) {
	m, err := scanMember(q.c.ExecRow(ctx,
		`INSERT INTO members (id, workspace_id, name, role, created_at) VALUES (?, ?, ?, ?, ?) RETURNING `+memberColumns,
		newID(), p.WorkspaceID, p.Name, p.Role, now()))
	if err := conflict(err, "member "+quote(p.Name)+" already exists in this workspace", "name"); err != nil {
		return nil, err
	}
	return m, internal(err, "creating member %q", p.Name)
}

func (q *Queries) MemberList(ctx context.Context, p *store.MemberListParams) ([]*skilld.Member, error) {
	pg := p.Page.Normalize()
	rows, err := q.c.Query(ctx, `SELECT `+memberColumns+` FROM members WHERE workspace_id = ? ORDER BY name LIMIT ? OFFSET ?`,
		p.WorkspaceID, pg.Limit, pg.Offset)
	ms, err := collect(rows, err, scanMember)
	return ms, internal(err, "listing members")
}
