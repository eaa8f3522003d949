package service

import (
	"context"
	"sync"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

// listCacheSize bounds how many skill list pages a server keeps. A page
// holds at most store.MaxPageSize skills, and with its encodings (its
// JSON and that JSON compressed, about 60 KB and 12 KB for a page of 100)
// the cache stays within a few tens of MiB.
const listCacheSize = 256

// listCache keeps skill list pages by workspace and query, each with the
// store's list revision as it was read just before the page. A page is
// answered again only while the revision is unchanged, which means
// nothing the page shows has changed, on this server or any other: the
// cache never serves a stale page, and a hit costs one small read
// instead of the count and the page queries. Cached pages are shared
// between callers and must not be changed.
type listCache struct {
	pages *lru.Cache[listKey, listEntry]
}

// listKey is everything a page depends on besides the revision: the
// workspace first, so no two workspaces ever share an entry.
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
	rev  string
	page *SkillPage
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

// skillPage answers p from the cache when the workspace's list revision
// still stands, else makes the page of the store's rows with build and
// remembers it under the revision read before the rows (so a write
// racing the read can only make the entry miss later, never serve old
// rows). build must depend on nothing but the rows and what keyOf keeps
// of p, as a cached page answers every caller with the same query.
func (s *Service) skillPage(ctx context.Context, p *store.SkillListParams, build func(*store.SkillListResult) *SkillPage) (*SkillPage, error) {
	k := keyOf(p)
	if k.workspace == "" {
		res, err := s.db.SkillList(ctx, p)
		if err != nil {
			return nil, err
		}
		return build(res), nil
	}
	rev, err := s.db.SkillListRevision(ctx, p.WorkspaceID)
	if err != nil {
		return nil, err
	}
	if e, ok := s.lists.pages.Get(k); ok && e.rev == rev {
		return e.page, nil
	}
	res, err := s.db.SkillList(ctx, p)
	if err != nil {
		return nil, err
	}
	page := build(res)
	page.encodings = &encodings{}
	s.lists.pages.Add(k, listEntry{rev: rev, page: page})
	return page, nil
}

// encodings keeps what an adapter made of a cached page (the API's JSON,
// and that compressed), so a page answered again is not encoded again.
// They live as long as the page's cache entry: a change to the workspace
// makes a new page, with none.
type encodings struct {
	mu sync.Mutex
	by map[string][]byte
}

// Encoded returns encode's bytes for the page, made once while the page
// is cached and shared by every caller it answers. name tells apart the
// encodings of one page (say "json" and "json+gzip"); encode must make
// the same bytes every time for a name, from the page alone, and the
// bytes must not be changed. A page not from the cache, and an encoding
// that fails, are encoded each time.
func (p *SkillPage) Encoded(name string, encode func() ([]byte, error)) ([]byte, error) {
	e := p.encodings
	if e == nil {
		return encode()
	}
	e.mu.Lock()
	b, ok := e.by[name]
	e.mu.Unlock()
	if ok {
		return b, nil
	}
	// Encoded outside the lock: two first callers may both encode, and
	// the page's other encodings are not held up meanwhile.
	b, err := encode()
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if kept, ok := e.by[name]; ok {
		return kept, nil
	}
	if e.by == nil {
		e.by = map[string][]byte{}
	}
	e.by[name] = b
	return b, nil
}
