package sqldb

import (
	"context"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

const tokenColumns = `id, workspace_id, COALESCE(member_id, ''), name, role, instance_admin, hash, created_by,
	created_at, expires_at, revoked_at, last_used_at`

func scanToken(r Row) (*skilld.Token, error) {
	var t skilld.Token
	if err := r.Scan(&t.ID, &t.WorkspaceID, &t.MemberID, &t.Name, &t.Role, &t.InstanceAdmin, &t.Hash, &t.CreatedBy,
		&t.CreatedAt, &t.ExpiresAt, &t.RevokedAt, &t.LastUsedAt); err != nil {
		return nil, err
	}
	t.CreatedAt = utc(t.CreatedAt)
	t.ExpiresAt, t.RevokedAt, t.LastUsedAt = utcp(t.ExpiresAt), utcp(t.RevokedAt), utcp(t.LastUsedAt)
	return &t, nil
}

func (q *Queries) TokenCreate(ctx context.Context, p *store.TokenCreateParams) (*skilld.Token, error) {
	t, err := scanToken(q.c.ExecRow(ctx,
		`INSERT INTO tokens (id, workspace_id, member_id, name, role, instance_admin, hash, created_by, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING `+tokenColumns,
		newID(), p.WorkspaceID, nullString(p.MemberID), p.Name, p.Role, p.InstanceAdmin, p.Hash, p.CreatedBy, now(), p.ExpiresAt))
	if err := conflict(err, "a token with this secret already exists", "hash"); err != nil {
		return nil, err
	}
	return t, internal(err, "creating token %q", p.Name)
}

func (q *Queries) TokenGetByHash(ctx context.Context, p *store.TokenGetByHashParams) (*skilld.Token, error) {
	t, err := scanToken(q.c.QueryRow(ctx, `SELECT `+tokenColumns+` FROM tokens WHERE hash = ?`, p.Hash))
	return t, notFound(err, "token")
}

func (q *Queries) TokenList(ctx context.Context, p *store.TokenListParams) ([]*skilld.Token, error) {
	pg := p.Page.Normalize()
	rows, err := q.c.Query(ctx, `SELECT `+tokenColumns+` FROM tokens WHERE workspace_id = ? ORDER BY id LIMIT ? OFFSET ?`,
		p.WorkspaceID, pg.Limit, pg.Offset)
	ts, err := collect(rows, err, scanToken)
	return ts, internal(err, "listing tokens")
}

func (q *Queries) TokenRevoke(ctx context.Context, p *store.TokenRevokeParams) error {
	n, err := q.c.Exec(ctx, `UPDATE tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ? AND workspace_id = ?`,
		p.At.UTC(), p.ID, p.WorkspaceID)
	if err != nil {
		return internal(err, "revoking token %q", p.ID)
	}
	if n == 0 {
		return notFound(ErrNoRows, "token %q", p.ID)
	}
	return nil
}

func (q *Queries) TokenTouch(ctx context.Context, p *store.TokenTouchParams) error {
	_, err := q.c.Exec(ctx, `UPDATE tokens SET last_used_at = ? WHERE id = ?`, p.At.UTC(), p.ID)
	return internal(err, "recording use of token %q", p.ID)
}
