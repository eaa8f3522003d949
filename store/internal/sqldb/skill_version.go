package sqldb

import (
	"context"
	"fmt"
	"strconv"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

const skillVersionColumns = `skill_id, number, package_digest, message, created_by, created_at`

func scanSkillVersion(r Row) (*skilld.SkillVersion, error) {
	var v skilld.SkillVersion
	if err := r.Scan(&v.SkillID, &v.Number, &v.Digest, &v.Message, &v.CreatedBy, &v.CreatedAt); err != nil {
		return nil, err
	}
	v.CreatedAt = utc(v.CreatedAt)
	return &v, nil
}

func (q *Queries) SkillVersionCreate(ctx context.Context, p *store.SkillVersionCreateParams) (*skilld.SkillVersion, error) {
	var out *skilld.SkillVersion
	err := q.tx(ctx, func(q *Queries) error {
		t := now()
		sql := `UPDATE skills SET current_version = current_version + 1, updated_by = ?, updated_at = ?
			WHERE id = ? AND workspace_id = ?`
		args := []any{p.CreatedBy, t, p.SkillID, p.WorkspaceID}
		if p.ExpectedVersion != nil {
			sql += ` AND current_version = ?`
			args = append(args, *p.ExpectedVersion)
		}
		var number int
		err := q.c.ExecRow(ctx, sql+` RETURNING current_version`, args...).Scan(&number)
		if isNoRows(err) && p.ExpectedVersion != nil {
			cur, gerr := q.SkillGet(ctx, &store.SkillGetParams{WorkspaceID: p.WorkspaceID, ID: p.SkillID})
			if gerr != nil {
				return gerr
			}
			return &skilld.Error{Code: skilld.ECONFLICT, Message: fmt.Sprintf(
				"skill %q changed meanwhile: it is at version %d, not %d; reload and try again", cur.Name, cur.Version, *p.ExpectedVersion)}
		}
		if err != nil {
			return notFound(err, "skill %q", p.SkillID)
		}
		v, err := scanSkillVersion(q.c.ExecRow(ctx, `INSERT INTO skill_versions (skill_id, number, package_digest, message, created_by, created_at)
			VALUES (?, ?, ?, ?, ?, ?) RETURNING `+skillVersionColumns, p.SkillID, number, p.Digest, p.Message, p.CreatedBy, t))
		if constraint(err, "foreign_key") != nil {
			return &skilld.Error{Code: skilld.EINVALID, Message: "package " + p.Digest + " is not stored", Err: err}
		}
		out = v
		return internal(err, "creating version %d of skill %q", number, p.SkillID)
	})
	return out, err
}

func (q *Queries) SkillVersionGet(ctx context.Context, p *store.SkillVersionGetParams) (*skilld.SkillVersion, error) {
	v, err := scanSkillVersion(q.c.QueryRow(ctx, `SELECT `+skillVersionColumns+` FROM skill_versions v
		WHERE v.skill_id = ? AND v.number = ? AND EXISTS (SELECT 1 FROM skills s WHERE s.id = v.skill_id AND s.workspace_id = ?)`,
		p.SkillID, p.Number, p.WorkspaceID))
	return v, notFound(err, "version %d of skill %q", p.Number, p.SkillID)
}

func (q *Queries) SkillVersionList(ctx context.Context, p *store.SkillVersionListParams) ([]*skilld.SkillVersion, error) {
	pg := p.Page.Normalize()
	cond, args := "", []any{p.SkillID, p.WorkspaceID}
	if pg.After != "" {
		n, err := strconv.Atoi(pg.After)
		if err != nil {
			return nil, skilld.Errorf(skilld.EINVALID, "the cursor of a version list must be a version number, not %q", pg.After)
		}
		cond, args, pg.Offset = " AND v.number < ?", append(args, n), 0
	}
	rows, err := q.c.Query(ctx, `SELECT `+skillVersionColumns+` FROM skill_versions v
		WHERE v.skill_id = ? AND EXISTS (SELECT 1 FROM skills s WHERE s.id = v.skill_id AND s.workspace_id = ?)`+cond+`
		ORDER BY v.number DESC LIMIT ? OFFSET ?`, append(args, pg.Limit, pg.Offset)...)
	vs, err := collect(rows, err, scanSkillVersion)
	return vs, internal(err, "listing versions of skill %q", p.SkillID)
}
