package service

import (
	"context"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

// listCacheSize bounds how many skill list pages a server keeps. A page
// holds at most store.MaxPageSize skills, so the cache stays within a few
// MiB.
const listCacheSize = 256

// listCache keeps skill list pages by workspace and query, each with the
// store's list revision as it was read just before the page. A page is
// answered again only while the revision is unchanged, which means
// nothing the page shows has changed, on this server or any other: the
// cache never serves a stale page, and a hit costs one small read
// instead of the count and the page queries. Cached results are shared
// between callers and must not be changed.
type listCache struct {
	pages *lru.Cache[listKey, listEntry]
}

type listKey struct {
	workspace, search        string
	source                   skilld.SourceType
	catalog                  bool
	limit, offset            int
	after                    bool
	afterCatalog             bool
	afterRegistry, afterName string
}

type listEntry struct {
	rev string
	res *store.SkillListResult
}

func newListCache() listCache {
	c, err := lru.New[listKey, listEntry](listCacheSize)
	if err != nil {
		panic(err) // only for a size below 1
	}
	return listCache{pages: c}
}

func keyOf(p *store.SkillListParams) listKey {
	if p.FromCatalog != nil {
		return listKey{} // not a query ListSkills makes; never cached
	}
	k := listKey{workspace: p.WorkspaceID, search: p.Search, source: p.SourceType, catalog: p.IncludeCatalog,
		limit: p.Page.Limit, offset: p.Page.Offset}
	if a := p.After; a != nil {
		k.after, k.afterCatalog, k.afterRegistry, k.afterName = true, a.Catalog, a.Registry, a.Name
	}
	return k
}

// skillList answers p from the cache when the workspace's list revision
// still stands, else from the store, remembering the page under the
// revision read before it (so a write racing the read can only make the
// entry miss later, never serve old rows).
func (s *Service) skillList(ctx context.Context, p *store.SkillListParams) (*store.SkillListResult, error) {
	k := keyOf(p)
	if k.workspace == "" {
		return s.db.SkillList(ctx, p)
	}
	rev, err := s.db.SkillListRevision(ctx, p.WorkspaceID)
	if err != nil {
		return nil, err
	}
	if e, ok := s.lists.pages.Get(k); ok && e.rev == rev {
		return e.res, nil
	}
	res, err := s.db.SkillList(ctx, p)
	if err != nil {
		return nil, err
	}
	s.lists.pages.Add(k, listEntry{rev: rev, res: res})
	return res, nil
}
