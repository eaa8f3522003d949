package service_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/storetest"
)

// pageReads counts the skill list pages read from the store.
type pageReads struct {
	store.Store
	n atomic.Int64
}

func (p *pageReads) SkillList(ctx context.Context, q *store.SkillListParams) (*store.SkillListResult, error) {
	p.n.Add(1)
	return p.Store.SkillList(ctx, q)
}

// createSkillNamed creates a small skill called name through svc.
func createSkillNamed(t *testing.T, svc *service.Service, a service.Actor, name string) {
	t.Helper()
	if _, err := svc.CreateSkill(t.Context(), a, service.CreateSkillParams{Files: map[string]string{
		"SKILL.md": fmt.Sprintf("---\nname: %s\ndescription: About %s.\n---\nBody.\n", name, name)}}); err != nil {
		t.Fatal(err)
	}
}

// Two servers on one database: server a keeps the pages it listed and
// answers them again without reading them while nothing they show has
// changed; every change, made through the other server or straight in
// the store (a catalog sync), shows in a's next list at once.
func TestListCache(t *testing.T) {
	for _, d := range storetest.Drivers(t) {
		t.Run(d.Name, func(t *testing.T) {
			db := &pageReads{Store: d.Open(t)}
			a, b, root := twoServers(t, db, service.Config{})
			create := func(name string) { t.Helper(); createSkillNamed(t, b, root, name) }
			list := func(p service.ListSkillsParams) []string {
				t.Helper()
				page, err := a.ListSkills(t.Context(), root, p)
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, it := range page.Items {
					if it.SkillView != nil {
						names = append(names, it.Name)
					} else {
						names = append(names, "catalog:"+it.CatalogItem.Name)
					}
				}
				return names
			}
			expect := func(what string, got []string, reads int64, want ...string) {
				t.Helper()
				if !slices.Equal(got, want) {
					t.Errorf("%s: listed %v, want %v", what, got, want)
				}
				if n := db.n.Load(); n != reads {
					t.Errorf("%s: %d page reads so far, want %d", what, n, reads)
				}
			}
			create("alpha")
			create("beta")
			expect("first list", list(service.ListSkillsParams{}), 1, "alpha", "beta")
			expect("the same list again", list(service.ListSkillsParams{}), 1, "alpha", "beta")
			expect("another page size", list(service.ListSkillsParams{PageSize: 1}), 2, "alpha")

			create("gamma")
			expect("after a create on the other server", list(service.ListSkillsParams{}), 3, "alpha", "beta", "gamma")
			if err := b.DeleteSkill(t.Context(), root, service.DeleteSkillParams{SkillRef: service.SkillRef{ID: "beta"}}); err != nil {
				t.Fatal(err)
			}
			expect("after a delete on the other server", list(service.ListSkillsParams{}), 4, "alpha", "gamma")

			withCatalog := service.ListSkillsParams{IncludeCatalog: true}
			expect("with the catalog", list(withCatalog), 5, "alpha", "gamma")
			reg, err := db.RegistryCreate(t.Context(), &store.RegistryCreateParams{Name: "acme", Trust: skilld.TrustVerified})
			if err != nil {
				t.Fatal(err)
			}
			item, err := db.CatalogItemCreate(t.Context(), &store.CatalogItemCreateParams{RegistryID: reg.ID, Name: "tool", Description: "d"})
			if err != nil {
				t.Fatal(err)
			}
			expect("an unpublished item", list(withCatalog), 6, "alpha", "gamma")
			alpha, err := a.GetSkill(t.Context(), root, service.GetSkillParams{SkillRef: service.SkillRef{ID: "alpha"}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.CatalogItemVersionCreate(t.Context(), &store.CatalogItemVersionCreateParams{ItemID: item.ID, Digest: alpha.Digest, Description: "v1", CreatedBy: "sync"}); err != nil {
				t.Fatal(err)
			}
			expect("after a catalog sync", list(withCatalog), 7, "alpha", "gamma", "catalog:tool")
			expect("and again", list(withCatalog), 7, "alpha", "gamma", "catalog:tool")
		})
	}
}

// A page's encodings are made once while it is cached, for every caller
// it answers, and a change on another server makes a new page that
// keeps none of them.
func TestListCacheEncodings(t *testing.T) {
	db := storetest.OpenSQLite(t)
	a, b, root := twoServers(t, db, service.Config{})
	create := func(name string) { t.Helper(); createSkillNamed(t, b, root, name) }
	var made atomic.Int64
	encode := func(page *service.SkillPage) []byte {
		t.Helper()
		got, err := page.Encoded("names", func() ([]byte, error) {
			made.Add(1)
			var names []string
			for _, it := range page.Items {
				names = append(names, it.Name)
			}
			return []byte(fmt.Sprint(names)), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	list := func() *service.SkillPage {
		t.Helper()
		page, err := a.ListSkills(t.Context(), root, service.ListSkillsParams{})
		if err != nil {
			t.Fatal(err)
		}
		return page
	}
	create("alpha")
	if got := string(encode(list())); got != "[alpha]" || made.Load() != 1 {
		t.Fatalf("first: %q, %d encodings", got, made.Load())
	}
	if got := string(encode(list())); got != "[alpha]" || made.Load() != 1 {
		t.Fatalf("again: %q, %d encodings, want the kept one", got, made.Load())
	}
	failed := errors.New("no")
	if _, err := list().Encoded("fails", func() ([]byte, error) { return nil, failed }); err != failed {
		t.Fatalf("a failing encoding: %v", err)
	}
	if got, err := list().Encoded("fails", func() ([]byte, error) { return []byte("ok"), nil }); err != nil || string(got) != "ok" {
		t.Fatalf("a failed encoding was kept: %q %v", got, err)
	}
	create("beta")
	if got := string(encode(list())); got != "[alpha beta]" || made.Load() != 2 {
		t.Fatalf("after a create on the other server: %q, %d encodings", got, made.Load())
	}
}
