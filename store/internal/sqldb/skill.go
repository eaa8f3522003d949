package sqldb

import (
	"context"
	"fmt"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

// skillColumns lists a skill's columns, prefixed with a table alias.
func skillColumns(alias string) string {
	cols := []string{"id", "workspace_id", "name", "slug", "description", "source_type", "source_url",
		"current_version", "registry", "trust", "COALESCE(catalog_item_id, '')", "catalog_version", "forked",
		"created_by", "updated_by", "created_at", "updated_at"}
	if alias != "" {
		for i, c := range cols {
			if strings.HasPrefix(c, "COALESCE(") {
				cols[i] = "COALESCE(" + alias + "." + strings.TrimPrefix(c, "COALESCE(")
			} else {
				cols[i] = alias + "." + c
			}
		}
	}
	return strings.Join(cols, ", ")
}

// skillSelect reads skills (alias s) with their current digest and, for
// installs, their catalog item's name and newest version.
const skillSelect = `SELECT %s, COALESCE(v.package_digest, ''), COALESCE(c.registry || '/' || c.name, ''), COALESCE(c.latest_version, 0)
	FROM %s
	LEFT JOIN skill_versions v ON v.skill_id = s.id AND v.number = s.current_version
	LEFT JOIN catalog_items c ON c.id = s.catalog_item_id`

func selectSkills() string { return selectSkillsFrom("skills s") }

// selectSkillsFrom is selectSkills with the skills (alias s) coming from
// the given FROM clause, which may narrow them first.
func selectSkillsFrom(from string) string { return fmt.Sprintf(skillSelect, skillColumns("s"), from) }

// scanSkillRead scans a row of skillSelect.
func scanSkillRead(r Row) (*skilld.Skill, error) { return scanSkillRow(r, true) }

// scanSkill scans a row of skillColumns alone.
func scanSkill(r Row) (*skilld.Skill, error) { return scanSkillRow(r, false) }

// scanSkillRow scans skillColumns and, with joined, the columns skillSelect
// adds after them.
func scanSkillRow(r Row, joined bool) (*skilld.Skill, error) {
	var s skilld.Skill
	dest := []any{&s.ID, &s.WorkspaceID, &s.Name, &s.Slug, &s.Description, &s.SourceType, &s.SourceURL,
		&s.Version, &s.Registry, &s.Trust, &s.CatalogItemID, &s.CatalogVersion, &s.Forked,
		&s.CreatedBy, &s.UpdatedBy, &s.CreatedAt, &s.UpdatedAt}
	if joined {
		dest = append(dest, &s.Digest, &s.CatalogItem, &s.CatalogLatestVersion)
	}
	if err := r.Scan(dest...); err != nil {
		return nil, err
	}
	s.CreatedAt, s.UpdatedAt = utc(s.CreatedAt), utc(s.UpdatedAt)
	return &s, nil
}

func (q *Queries) SkillCreate(ctx context.Context, p *store.SkillCreateParams) (*skilld.Skill, error) {
	base := store.Slugify(p.Name)
	var out *skilld.Skill
	err := q.tx(ctx, func(q *Queries) error {
		if err := q.lookalike(ctx, p.WorkspaceID, "", p.Name); err != nil {
			return err
		}
		// Slugs hold only [a-z0-9-], so the ones from base to "base." ('.'
		// follows '-' in byte order) are exactly base and base-…: one
		// index range, where LIKE 'base-%' would scan the workspace
		// (SQLite's LIKE is case-insensitive and cannot use the index).
		rows, err := q.c.Query(ctx, `SELECT slug FROM skills WHERE workspace_id = ? AND slug >= ? AND slug < ?`,
			p.WorkspaceID, base, base+".")
		slugs, err := collect(rows, err, scanValue[string])
		if err != nil {
			return internal(err, "creating skill %q", p.Name)
		}
		taken := make(map[string]bool, len(slugs))
		for _, s := range slugs {
			taken[s] = true
		}
		t := now()
		for n := 1; n <= store.MaxSlugSuffix; n++ {
			slug := store.SlugCandidate(base, n)
			if taken[slug] {
				continue
			}
			s, err := scanSkill(q.c.ExecRow(ctx, `INSERT INTO skills (id, workspace_id, name, name_skeleton, slug, description, search_text,
				source_type, source_url, registry, trust, catalog_item_id, catalog_version, created_by, updated_by, created_at, updated_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT (workspace_id, slug) DO NOTHING RETURNING `+skillColumns(""),
				newID(), p.WorkspaceID, p.Name, store.NameSkeleton(p.Name), slug, p.Description, store.SearchText(p.Name, p.Description),
				p.SourceType, p.SourceURL, p.Registry, p.Trust, nullString(p.CatalogItemID), p.CatalogVersion,
				p.CreatedBy, p.CreatedBy, t, t))
			switch {
			case isNoRows(err):
				taken[slug] = true // taken by a concurrent create since the query above
				continue
			case err != nil:
				if err := nameConflict(err, p.Name); err != nil {
					return err
				}
				return internal(err, "creating skill %q", p.Name)
			}
			if _, err := q.c.Exec(ctx, `UPDATE workspaces SET skill_count = skill_count + 1 WHERE id = ?`, p.WorkspaceID); err != nil {
				return internal(err, "creating skill %q", p.Name)
			}
			out = s
			return nil
		}
		return &skilld.Error{Code: skilld.ECONFLICT, Err: store.ErrConflictingSlugs,
			Message: "every slug from " + quote(base) + " to " + quote(store.SlugCandidate(base, store.MaxSlugSuffix)) + " is taken in this workspace; choose another name"}
	})
	return out, err
}

func (q *Queries) SkillGet(ctx context.Context, p *store.SkillGetParams) (*skilld.Skill, error) {
	key, val := "id", p.ID
	switch {
	case p.ID != "":
	case p.Name != "":
		key, val = "name", p.Name
	default:
		key, val = "slug", p.Slug
	}
	s, err := scanSkillRead(q.c.QueryRow(ctx, selectSkills()+` WHERE s.workspace_id = ? AND s.`+key+` = ?`, p.WorkspaceID, val))
	return s, notFound(err, "skill %q", val)
}

func (q *Queries) SkillUpdate(ctx context.Context, p *store.SkillUpdateParams) (*skilld.Skill, error) {
	var out *skilld.Skill
	err := q.tx(ctx, func(q *Queries) error {
		cur, err := q.SkillGet(ctx, &store.SkillGetParams{WorkspaceID: p.WorkspaceID, ID: p.ID})
		if err != nil {
			return err
		}
		if p.Name != nil && *p.Name != cur.Name {
			if err := q.lookalike(ctx, p.WorkspaceID, p.ID, *p.Name); err != nil {
				return err
			}
			cur.Name = *p.Name
		}
		if p.Description != nil {
			cur.Description = *p.Description
		}
		if p.SourceURL != nil {
			cur.SourceURL = *p.SourceURL
		}
		if p.CatalogVersion != nil {
			cur.CatalogVersion = *p.CatalogVersion
		}
		if p.Forked != nil {
			cur.Forked = *p.Forked
		}
		// The skeleton changes only with the name: a skill grandfathered
		// without one (see backfillSkeletons) keeps NULL until renamed.
		_, err = q.c.Exec(ctx, `UPDATE skills SET name = ?, description = ?, search_text = ?, source_url = ?,
			catalog_version = ?, forked = ?, updated_by = ?, updated_at = ?,
			name_skeleton = CASE WHEN name = ? THEN name_skeleton ELSE ? END
			WHERE id = ? AND workspace_id = ?`,
			cur.Name, cur.Description, store.SearchText(cur.Name, cur.Description), cur.SourceURL,
			cur.CatalogVersion, cur.Forked, p.UpdatedBy, now(), cur.Name, store.NameSkeleton(cur.Name), p.ID, p.WorkspaceID)
		if err := nameConflict(err, cur.Name); err != nil {
			return err
		}
		if err != nil {
			return internal(err, "updating skill %q", p.ID)
		}
		out, err = q.SkillGet(ctx, &store.SkillGetParams{WorkspaceID: p.WorkspaceID, ID: p.ID})
		return err
	})
	return out, err
}

func (q *Queries) SkillDelete(ctx context.Context, p *store.SkillDeleteParams) error {
	return q.tx(ctx, func(q *Queries) error {
		n, err := q.c.Exec(ctx, `DELETE FROM skills WHERE id = ? AND workspace_id = ?`, p.ID, p.WorkspaceID)
		if err != nil {
			return internal(err, "deleting skill %q", p.ID)
		}
		if n == 0 {
			return notFound(ErrNoRows, "skill %q", p.ID)
		}
		_, err = q.c.Exec(ctx, `UPDATE workspaces SET skill_count = skill_count - 1 WHERE id = ?`, p.WorkspaceID)
		return internal(err, "deleting skill %q", p.ID)
	})
}

// lookalike refuses a name confusable with another skill's in the
// workspace (or equal to it), naming that skill; the index lets at most one
// skill hold a skeleton. The unique index on name_skeleton is what
// holds under concurrent writers; this read, in the same transaction, is
// what lets the common case say which skill is in the way. self is the
// skill being renamed, if any.
func (q *Queries) lookalike(ctx context.Context, workspaceID, self, name string) error {
	var existing string
	err := q.c.QueryRow(ctx, `SELECT name FROM skills WHERE workspace_id = ? AND name_skeleton = ? AND id <> ?`,
		workspaceID, store.NameSkeleton(name), self).Scan(&existing)
	switch {
	case isNoRows(err):
		return nil
	case err != nil:
		return internal(err, "checking skill name %q", name)
	case existing == name:
		return &skilld.Error{Code: skilld.ECONFLICT, Message: "a skill named " + quote(name) + " already exists in this workspace"}
	}
	return confusableName(name, "the skill "+quote(existing), nil)
}

func confusableName(name, other string, err error) error {
	return &skilld.Error{Code: skilld.ECONFLICT, Err: err, Message: "skill name " + quote(name) + " looks like " + other +
		" in this workspace (their characters are confusable); choose a name that reads differently",
		Details: []skilld.Detail{{Field: "name", Message: "confusable with " + other}}}
}

// nameConflict explains a unique violation on a skill's name, or returns
// nil for any other error.
func nameConflict(err error, name string) error {
	if constraint(err, "unique", "skeleton") != nil {
		return confusableName(name, "another skill", err)
	}
	return conflict(err, "a skill named "+quote(name)+" already exists in this workspace", "name")
}
