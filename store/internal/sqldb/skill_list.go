package sqldb

import (
	"context"
	"strconv"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

// Statement is one SQL statement with its arguments.
type Statement struct {
	SQL  string
	Args []any
}

// skillListQueries are the statements of one SkillList call: counting and
// paging the workspace's skills, and (when the catalog is included)
// counting and paging the catalog items the workspace has not installed.
// The paging statements take LIMIT and OFFSET as their last two arguments.
type skillListQueries struct {
	skillCount, skillPage     Statement
	catalogCount, catalogPage *Statement
}

// keyset returns the statements that start after p.After: the skill page
// from the next name (OFFSET 0), and the catalog page after the cursor's
// item when the cursor is in the catalog.
func (qs skillListQueries) keyset(p *store.SkillListParams) skillListQueries {
	if p.After == nil {
		return qs
	}
	if !p.After.Catalog {
		qs.skillPage = Statement{strings.Replace(qs.skillPage.SQL, " ORDER BY s.name LIMIT", " AND s.name > ? ORDER BY s.name LIMIT", 1),
			append(append([]any{}, qs.skillPage.Args...), p.After.Name)}
		return qs
	}
	if qs.catalogPage != nil {
		cp := Statement{strings.Replace(qs.catalogPage.SQL, " ORDER BY c.registry, c.name LIMIT", " AND (c.registry > ? OR c.registry = ? AND c.name > ?) ORDER BY c.registry, c.name LIMIT", 1),
			append(append([]any{}, qs.catalogPage.Args...), p.After.Registry, p.After.Registry, p.After.Name)}
		qs.catalogPage = &cp
	}
	return qs
}

func buildSkillList(d *Dialect, p *store.SkillListParams) skillListQueries {
	where := []string{"s.workspace_id = ?"}
	args := []any{p.WorkspaceID}
	if p.Search != "" {
		search := LikeSearch
		if d.SkillSearch != nil {
			search = d.SkillSearch
		}
		cond, arg, workspace := search(p.Search)
		if workspace != "" {
			where[0] = workspace
		}
		where = append(where, cond)
		args = append(args, arg)
	}
	if p.SourceType != "" {
		where = append(where, "s.source_type = ?")
		args = append(args, p.SourceType)
	}
	if p.FromCatalog != nil {
		if *p.FromCatalog {
			where = append(where, "s.catalog_item_id IS NOT NULL")
		} else {
			where = append(where, "s.catalog_item_id IS NULL")
		}
	}
	cond := strings.Join(where, " AND ")
	count := Statement{`SELECT COUNT(*) FROM skills s WHERE ` + cond, args}
	if len(where) == 1 {
		count = Statement{`SELECT skill_count FROM workspaces WHERE id = ?`, args}
	}
	qs := skillListQueries{
		skillCount: count,
		// The page is chosen from skills alone and joined afterwards, so a
		// deep OFFSET skips index entries rather than joined rows.
		skillPage: Statement{selectSkillsFrom(`(SELECT s.id FROM skills s WHERE `+cond+
			` ORDER BY s.name LIMIT ? OFFSET ?) page JOIN skills s ON s.id = page.id`) + ` ORDER BY s.name`, args},
	}
	if !p.IncludeCatalog || p.FromCatalog != nil || p.SourceType != "" && p.SourceType != skilld.SourceCatalog {
		return qs
	}
	ccond := `c.latest_version > 0 AND NOT EXISTS (SELECT 1 FROM installs i WHERE i.workspace_id = ? AND i.item_id = c.id)`
	cargs := []any{p.WorkspaceID}
	if p.Search != "" {
		ccond += ` AND c.search_text LIKE ? ESCAPE '\'`
		cargs = append(cargs, store.LikePattern(p.Search))
	}
	qs.catalogCount = &Statement{`SELECT COUNT(*) FROM catalog_items c WHERE ` + ccond, cargs}
	qs.catalogPage = &Statement{`SELECT ` + catalogItemColumns + ` FROM catalog_items c JOIN registries r ON r.id = c.registry_id
		WHERE ` + ccond + ` ORDER BY c.registry, c.name LIMIT ? OFFSET ?`, cargs}
	return qs
}

// SkillListStatements returns the statements SkillList runs for p, with
// example paging arguments, so drivers can test their query plans.
func (s *Store) SkillListStatements(p *store.SkillListParams) []Statement {
	qs := buildSkillList(s.d, p)
	paged := func(s Statement) Statement {
		return Statement{s.SQL, append(append([]any{}, s.Args...), 50, 0)}
	}
	out := []Statement{qs.skillCount, paged(qs.skillPage)}
	if qs.catalogCount != nil {
		out = append(out, *qs.catalogCount, paged(*qs.catalogPage))
	}
	return out
}

// SkillList pages over two ordered sets, the workspace's skills and then
// the catalog items it has not installed, without ever reading more than a
// page of rows: it counts each set, then reads the page's share of each
// with LIMIT/OFFSET.
func (q *Queries) SkillList(ctx context.Context, p *store.SkillListParams) (*store.SkillListResult, error) {
	pg := p.Page.Normalize()
	qs := buildSkillList(q.d, p).keyset(p)
	res := &store.SkillListResult{Items: []store.SkillListItem{}}
	var nSkills int
	if err := q.c.QueryRow(ctx, qs.skillCount.SQL, qs.skillCount.Args...).Scan(&nSkills); err != nil && !isNoRows(err) {
		return nil, internal(err, "counting skills")
	}
	res.Total = nSkills
	inCatalog := p.After != nil && p.After.Catalog
	if p.After != nil {
		// A keyset page starts at its cursor; offsets count from there.
		pg.Offset = 0
		if inCatalog {
			nSkills = 0
		}
	}
	if pg.Offset < nSkills && !inCatalog {
		rows, err := q.c.Query(ctx, qs.skillPage.SQL, append(qs.skillPage.Args, pg.Limit, pg.Offset)...)
		skills, err := collect(rows, err, scanSkillRead)
		if err != nil {
			return nil, internal(err, "listing skills")
		}
		for _, s := range skills {
			res.Items = append(res.Items, store.SkillListItem{Skill: s})
		}
	}
	if qs.catalogCount == nil {
		return res, nil
	}
	var nCatalog int
	if err := q.c.QueryRow(ctx, qs.catalogCount.SQL, qs.catalogCount.Args...).Scan(&nCatalog); err != nil {
		return nil, internal(err, "counting catalog items")
	}
	res.Total += nCatalog
	if room := pg.Limit - len(res.Items); room > 0 && nCatalog > 0 {
		offset := max(pg.Offset-nSkills, 0)
		rows, err := q.c.Query(ctx, qs.catalogPage.SQL, append(qs.catalogPage.Args, room, offset)...)
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

func (q *Queries) SkillListRevision(ctx context.Context, workspaceID string) (string, error) {
	var skills, catalog int64
	err := q.c.QueryRow(ctx, `SELECT w.skills_rev, r.catalog FROM workspaces w, list_revision r WHERE w.id = ? AND r.id = 1`,
		workspaceID).Scan(&skills, &catalog)
	if err != nil {
		return "", notFound(err, "workspace %q", workspaceID)
	}
	return strconv.FormatInt(skills, 10) + "." + strconv.FormatInt(catalog, 10), nil
}

// Explain returns the database's query plan for a statement, one line per
// plan node, for tests and operators checking that queries use indexes.
func (s *Store) Explain(ctx context.Context, st Statement) ([]string, error) {
	rows, err := s.db.Query(ctx, s.d.Explain+" "+st.SQL, st.Args...)
	return collect(rows, err, func(r Row) (string, error) {
		vals := make([]string, s.d.ExplainColumns)
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		err := r.Scan(ptrs...)
		return vals[len(vals)-1], err
	})
}
