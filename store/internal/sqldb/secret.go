package sqldb

import (
	"context"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

func (q *Queries) SecretPut(ctx context.Context, p *store.SecretPutParams) (*skilld.Secret, error) {
	t := now()
	_, err := q.c.Exec(ctx, `INSERT INTO secrets (workspace_id, name, key_id, ciphertext, updated_by, updated_at) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (workspace_id, name) DO UPDATE SET key_id = excluded.key_id, ciphertext = excluded.ciphertext, updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
		p.WorkspaceID, p.Name, p.KeyID, p.Ciphertext, p.UpdatedBy, t)
	if constraint(err, "foreign_key") != nil {
		return nil, &skilld.Error{Code: skilld.ENOTFOUND, Message: "workspace " + p.WorkspaceID + " not found", Err: err}
	}
	if err != nil {
		return nil, internal(err, "storing secret %s", p.Name)
	}
	return &skilld.Secret{Name: p.Name, UpdatedBy: p.UpdatedBy, UpdatedAt: t}, nil
}

func (q *Queries) SecretList(ctx context.Context, p *store.SecretListParams) ([]skilld.Secret, error) {
	rows, err := q.c.Query(ctx, `SELECT name, updated_by, updated_at FROM secrets WHERE workspace_id = ? ORDER BY name`, p.WorkspaceID)
	out, err := collect(rows, err, func(r Row) (skilld.Secret, error) {
		var s skilld.Secret
		err := r.Scan(&s.Name, &s.UpdatedBy, &s.UpdatedAt)
		s.UpdatedAt = utc(s.UpdatedAt)
		return s, err
	})
	if out == nil && err == nil {
		out = []skilld.Secret{}
	}
	return out, internal(err, "listing secrets")
}

func (q *Queries) SecretGet(ctx context.Context, p *store.SecretGetParams) (*store.SealedSecret, error) {
	s := &store.SealedSecret{}
	err := q.c.QueryRow(ctx, `SELECT name, key_id, ciphertext, updated_by, updated_at FROM secrets WHERE workspace_id = ? AND name = ?`, p.WorkspaceID, p.Name).
		Scan(&s.Name, &s.KeyID, &s.Ciphertext, &s.UpdatedBy, &s.UpdatedAt)
	if err != nil {
		return nil, notFound(err, "secret %s", p.Name)
	}
	s.UpdatedAt = utc(s.UpdatedAt)
	return s, nil
}

func (q *Queries) SecretDelete(ctx context.Context, p *store.SecretGetParams) error {
	res, err := q.c.Exec(ctx, `DELETE FROM secrets WHERE workspace_id = ? AND name = ?`, p.WorkspaceID, p.Name)
	if err != nil {
		return internal(err, "deleting secret %s", p.Name)
	}
	if res == 0 {
		return skilld.Errorf(skilld.ENOTFOUND, "secret %s not found", p.Name)
	}
	return nil
}
