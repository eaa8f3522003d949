package storetest

import (
	"fmt"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

func listNames(res *store.SkillListResult) []string {
	out := make([]string, len(res.Items))
	for i, it := range res.Items {
		switch {
		case it.Skill != nil && it.Catalog == nil:
			out[i] = it.Skill.Name
		case it.Catalog != nil && it.Skill == nil:
			out[i] = "catalog:" + it.Catalog.Name
		default:
			out[i] = "BAD ITEM"
		}
	}
	return out
}

func testSkillList(t *testing.T, open Opener) {
	s := open(t)
	ws := newWorkspace(t, s, "w")
	other := newWorkspace(t, s, "other")
	for i := range 7 {
		newSkill(t, s, ws.ID, fmt.Sprintf("skill-%d", i))
	}
	newSkill(t, s, other.ID, "skill-x")
	must[*skilld.Skill](t)(s.SkillCreate(ctx(t), &store.SkillCreateParams{WorkspaceID: ws.ID, Name: "Über Tool", Description: "Straße helper", SourceType: skilld.SourceZip}))
	reg := must[*skilld.Registry](t)(s.RegistryCreate(ctx(t), &store.RegistryCreateParams{Name: "acme", Trust: skilld.TrustVerified}))
	installed := newItem(t, s, reg.ID, "installed", 1)
	newItem(t, s, reg.ID, "alpha", 1)
	newItem(t, s, reg.ID, "beta", 2)
	newItem(t, s, reg.ID, "unpublished", 0)
	sk := must[*skilld.Skill](t)(s.SkillCreate(ctx(t), &store.SkillCreateParams{
		WorkspaceID: ws.ID, Name: "installed", Description: "from acme", SourceType: skilld.SourceCatalog,
		CatalogItemID: installed.ID, CatalogVersion: 1, Registry: "acme", Trust: skilld.TrustVerified,
	}))
	must[*skilld.Install](t)(s.InstallCreate(ctx(t), &store.InstallCreateParams{WorkspaceID: ws.ID, ItemID: installed.ID, SkillID: sk.ID, Version: 1}))

	list := func(p store.SkillListParams) *store.SkillListResult {
		t.Helper()
		p.WorkspaceID = ws.ID
		return must[*store.SkillListResult](t)(s.SkillList(ctx(t), &p))
	}
	expect := func(name string, res *store.SkillListResult, total int, want ...string) {
		t.Helper()
		got := listNames(res)
		if res.Total != total || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: got %v total %d; want %v total %d", name, got, res.Total, want, total)
		}
	}
	expect("page 1", list(store.SkillListParams{Page: store.Page{Limit: 4}}), 9, "installed", "skill-0", "skill-1", "skill-2")
	expect("page 3", list(store.SkillListParams{Page: store.Page{Limit: 4, Offset: 8}}), 9, "Über Tool")
	expect("past the end", list(store.SkillListParams{Page: store.Page{Limit: 4, Offset: 20}}), 9)
	expect("no full case folding (ß is not ss)", list(store.SkillListParams{Search: "STRASSE"}), 0)
	expect("search Unicode", list(store.SkillListParams{Search: "über"}), 1, "Über Tool")
	expect("search description", list(store.SkillListParams{Search: "ACME"}), 1, "installed")
	expect("wildcards are literal", list(store.SkillListParams{Search: "skill_"}), 0)
	expect("source type", list(store.SkillListParams{SourceType: skilld.SourceZip}), 1, "Über Tool")
	expect("from catalog", list(store.SkillListParams{FromCatalog: ptr(true)}), 1, "installed")
	expect("not from catalog", list(store.SkillListParams{FromCatalog: ptr(false), Page: store.Page{Limit: 2}}), 8, "skill-0", "skill-1")
	// With the catalog: workspace skills first, then published items not
	// installed here, across a page boundary.
	expect("with catalog, boundary page", list(store.SkillListParams{IncludeCatalog: true, Page: store.Page{Limit: 4, Offset: 6}}), 11,
		"skill-5", "skill-6", "Über Tool", "catalog:alpha")
	expect("with catalog, catalog-only page", list(store.SkillListParams{IncludeCatalog: true, Page: store.Page{Limit: 4, Offset: 10}}), 11, "catalog:beta")
	expect("with catalog and search", list(store.SkillListParams{IncludeCatalog: true, Search: "beta"}), 1, "catalog:beta")
	expect("catalog source only", list(store.SkillListParams{IncludeCatalog: true, SourceType: skilld.SourceCatalog}), 3, "installed", "catalog:alpha", "catalog:beta")
	expect("other source excludes catalog", list(store.SkillListParams{IncludeCatalog: true, SourceType: skilld.SourceZip}), 1, "Über Tool")
	// Search follows renames and deletions (the SQLite driver keeps a
	// trigram index in step with triggers).
	s5 := must[*skilld.Skill](t)(s.SkillGet(ctx(t), &store.SkillGetParams{WorkspaceID: ws.ID, Name: "skill-5"}))
	must[*skilld.Skill](t)(s.SkillUpdate(ctx(t), &store.SkillUpdateParams{WorkspaceID: ws.ID, ID: s5.ID, Name: ptr("renamed-five"), Description: ptr("Counts pebbles")}))
	expect("search a new name", list(store.SkillListParams{Search: "RENAMED"}), 1, "renamed-five")
	expect("search a new description", list(store.SkillListParams{Search: "pebbles"}), 1, "renamed-five")
	expect("search an old name", list(store.SkillListParams{Search: "skill-5"}), 0)
	if err := s.SkillDelete(ctx(t), &store.SkillDeleteParams{WorkspaceID: ws.ID, ID: s5.ID}); err != nil {
		t.Fatal(err)
	}
	expect("search a deleted skill", list(store.SkillListParams{Search: "pebbles"}), 0)
	expect("search a short term", list(store.SkillListParams{Search: "ll"}), 7, "installed", "skill-0", "skill-1", "skill-2", "skill-3", "skill-4", "skill-6")
	expect("search other workspaces' skills", list(store.SkillListParams{Search: "skill-x"}), 0)

	got := list(store.SkillListParams{FromCatalog: ptr(true)}).Items[0].Skill
	if got.CatalogItem != "acme/installed" || got.CatalogLatestVersion != 1 || got.CatalogVersion != 1 || got.UpdateAvailable() {
		t.Errorf("installed skill's catalog link: %+v", got)
	}
	must[*skilld.CatalogItemVersion](t)(s.CatalogItemVersionCreate(ctx(t), &store.CatalogItemVersionCreateParams{ItemID: installed.ID, Digest: newPackage(t, s, "installed v2"), Description: "v2"}))
	got = must[*skilld.Skill](t)(s.SkillGet(ctx(t), &store.SkillGetParams{WorkspaceID: ws.ID, ID: sk.ID}))
	if got.CatalogLatestVersion != 2 || !got.UpdateAvailable() {
		t.Errorf("after publishing v2: %+v", got)
	}
	res := list(store.SkillListParams{IncludeCatalog: true, Page: store.Page{Offset: 8}}) // 8 skills since the delete above
	if c := res.Items[0].Catalog; c == nil || c.Registry != "acme" || c.LatestVersion != 1 || c.Trust != skilld.TrustVerified {
		t.Errorf("catalog projection %+v", res.Items[0].Catalog)
	}
}

func testInstalls(t *testing.T, open Opener) {
	s := open(t)
	ws := newWorkspace(t, s, "w")
	reg := must[*skilld.Registry](t)(s.RegistryCreate(ctx(t), &store.RegistryCreateParams{Name: "acme", Trust: skilld.TrustOfficial}))
	it := newItem(t, s, reg.ID, "pdf", 2)
	sk := newSkill(t, s, ws.ID, "pdf")
	in := must[*skilld.Install](t)(s.InstallCreate(ctx(t), &store.InstallCreateParams{WorkspaceID: ws.ID, ItemID: it.ID, SkillID: sk.ID, Version: 1}))
	if in.Version != 1 || in.SkillID != sk.ID {
		t.Fatalf("install %+v", in)
	}
	sk2 := newSkill(t, s, ws.ID, "pdf copy")
	_, err := s.InstallCreate(ctx(t), &store.InstallCreateParams{WorkspaceID: ws.ID, ItemID: it.ID, SkillID: sk2.ID, Version: 2})
	wantCode(t, err, skilld.ECONFLICT)
	if got := must[*skilld.Install](t)(s.InstallGet(ctx(t), &store.InstallGetParams{WorkspaceID: ws.ID, SkillID: sk.ID})); got.ItemID != it.ID {
		t.Errorf("by skill %+v", got)
	}
	up := must[*skilld.Install](t)(s.InstallUpdate(ctx(t), &store.InstallUpdateParams{WorkspaceID: ws.ID, ItemID: it.ID, Version: 2}))
	if up.Version != 2 || up.UpdatedAt.Before(in.UpdatedAt) {
		t.Errorf("updated %+v", up)
	}
	other := newWorkspace(t, s, "other")
	_, err = s.InstallGet(ctx(t), &store.InstallGetParams{WorkspaceID: other.ID, ItemID: it.ID})
	wantCode(t, err, skilld.ENOTFOUND)
	// Deleting the skill removes its install.
	if err := s.SkillDelete(ctx(t), &store.SkillDeleteParams{WorkspaceID: ws.ID, ID: sk.ID}); err != nil {
		t.Fatal(err)
	}
	_, err = s.InstallGet(ctx(t), &store.InstallGetParams{WorkspaceID: ws.ID, ItemID: it.ID})
	wantCode(t, err, skilld.ENOTFOUND)
}

func testPolicy(t *testing.T, open Opener) {
	s := open(t)
	ws := newWorkspace(t, s, "w")
	p := must[*skilld.Policy](t)(s.PolicyGet(ctx(t), &store.PolicyGetParams{WorkspaceID: ws.ID}))
	if len(p.InstallRules) != 0 || p.InstallRules == nil || len(p.Tools.Denied) != 0 {
		t.Errorf("default policy %+v", p)
	}
	rules := []skilld.InstallRule{{Effect: skilld.EffectDeny, Registry: "acme"}, {Effect: skilld.EffectDeny, MinTrust: skilld.TrustVerified}}
	tools := skilld.ToolPolicy{Denied: []string{"shell"}, RequireApproval: []string{"write_*"}}
	must[*skilld.Policy](t)(s.PolicyPut(ctx(t), &store.PolicyPutParams{WorkspaceID: ws.ID, InstallRules: rules, Tools: tools}))
	p = must[*skilld.Policy](t)(s.PolicyGet(ctx(t), &store.PolicyGetParams{WorkspaceID: ws.ID}))
	if fmt.Sprint(p.InstallRules) != fmt.Sprint(rules) || fmt.Sprint(p.Tools) != fmt.Sprint(tools) || p.UpdatedAt.IsZero() {
		t.Errorf("policy read back %+v", p)
	}
	must[*skilld.Policy](t)(s.PolicyPut(ctx(t), &store.PolicyPutParams{WorkspaceID: ws.ID}))
	p = must[*skilld.Policy](t)(s.PolicyGet(ctx(t), &store.PolicyGetParams{WorkspaceID: ws.ID}))
	if len(p.InstallRules) != 0 || len(p.Tools.Denied) != 0 {
		t.Errorf("replaced policy %+v", p)
	}
}
