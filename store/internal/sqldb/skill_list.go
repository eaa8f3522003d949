package sqldb

import (
	"context"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

// SkillList pages over two ordered sets, the workspace's skills and then
// the catalog items it has not installed, without ever reading more than a
// page of rows: it counts each set, then reads the page's share of each
// with LIMIT/OFFSET.
func (q *Queries) SkillList(ctx context.Context, p *store.SkillListParams) (*store.SkillListResult, error) {
	pg := p.Page.Normalize()
	res := &store.SkillListResult{Items: []store.SkillListItem{}}

	where := []string{"workspace_id = ?"}
	args := []any{p.WorkspaceID}
	if p.Search != "" {
		where = append(where, `search_text LIKE ? ESCAPE '\'`)
		args = append(args, store.LikePattern(p.Search))
	}
	if p.SourceType != "" {
		where = append(where, "source_type = ?")
		args = append(args, p.SourceType)
	}
	if p.FromCatalog != nil {
		if *p.FromCatalog {
			where = append(where, "catalog_item_id IS NOT NULL")
		} else {
			where = append(where, "catalog_item_id IS NULL")
		}
	}
	cond := strings.Join(where, " AND ")
	var nSkills int
	if err := q.c.QueryRow(ctx, `SELECT COUNT(*) FROM skills WHERE `+cond, args...).Scan(&nSkills); err != nil {
		return nil, internal(err, "counting skills")
	}
	res.Total = nSkills
	if pg.Offset < nSkills {
		rows, err := q.c.Query(ctx, `SELECT `+skillColumns("")+` FROM skills WHERE `+cond+` ORDER BY name LIMIT ? OFFSET ?`,
			append(args, pg.Limit, pg.Offset)...)
		skills, err := collect(rows, err, scanSkill)
		if err != nil {
			return nil, internal(err, "listing skills")
		}
		for _, s := range skills {
			res.Items = append(res.Items, store.SkillListItem{Skill: s})
		}
	}

	if !p.IncludeCatalog || p.FromCatalog != nil || p.SourceType != "" && p.SourceType != skilld.SourceCatalog {
		return res, nil
	}
	ccond := `c.latest_version > 0 AND NOT EXISTS (SELECT 1 FROM installs i WHERE i.workspace_id = ? AND i.item_id = c.id)`
	cargs := []any{p.WorkspaceID}
	if p.Search != "" {
		ccond += ` AND c.search_text LIKE ? ESCAPE '\'`
		cargs = append(cargs, store.LikePattern(p.Search))
	}
	var nCatalog int
	if err := q.c.QueryRow(ctx, `SELECT COUNT(*) FROM catalog_items c WHERE `+ccond, cargs...).Scan(&nCatalog); err != nil {
		return nil, internal(err, "counting catalog items")
	}
	res.Total += nCatalog
	if room := pg.Limit - len(res.Items); room > 0 && nCatalog > 0 {
		offset := max(pg.Offset-nSkills, 0)
		rows, err := q.c.Query(ctx, `SELECT `+catalogItemColumns+` FROM catalog_items c JOIN registries r ON r.id = c.registry_id
			WHERE `+ccond+` ORDER BY r.name, c.name LIMIT ? OFFSET ?`, append(cargs, room, offset)...)
		items, err := collect(rows, err, scanCatalogItem)
		if err != nil {
			return nil, internal(err, "listing catalog items")
		}
		for _, it := range items {
			res.Items = append(res.Items, store.SkillListItem{Catalog: it})
		}
	}
	return res, nil
}
