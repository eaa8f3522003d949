package storetest

import (
	"errors"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

// testSkillListRevision: every write that changes what SkillList shows
// moves the workspace's list revision, in the transaction that makes it
// (a rolled-back write leaves it), and a workspace's own writes leave the
// other workspaces' revisions alone; catalog writes move everyone's.
func testSkillListRevision(t *testing.T, open Opener) {
	s := open(t)
	ws := newWorkspace(t, s, "w")
	other := newWorkspace(t, s, "other")
	rev := func(ws *skilld.Workspace) string {
		t.Helper()
		return must[string](t)(s.SkillListRevision(ctx(t), ws.ID))
	}
	step := func(name string, wantOther bool, write func()) {
		t.Helper()
		before, otherBefore := rev(ws), rev(other)
		write()
		if rev(ws) == before {
			t.Errorf("%s: the list revision did not move (%s)", name, before)
		}
		if moved := rev(other) != otherBefore; moved != wantOther {
			t.Errorf("%s: the other workspace's revision moved = %v, want %v", name, moved, wantOther)
		}
	}
	var sk *skilld.Skill
	step("create a skill", false, func() { sk = newSkill(t, s, ws.ID, "alpha") })
	step("new version", false, func() {
		must[*skilld.SkillVersion](t)(s.SkillVersionCreate(ctx(t), &store.SkillVersionCreateParams{WorkspaceID: ws.ID, SkillID: sk.ID, Digest: newPackage(t, s, "alpha 1"), CreatedBy: "tester"}))
	})
	step("rename", false, func() {
		name := "alpha-two"
		must[*skilld.Skill](t)(s.SkillUpdate(ctx(t), &store.SkillUpdateParams{WorkspaceID: ws.ID, ID: sk.ID, Name: &name, UpdatedBy: "tester"}))
	})
	reg := must[*skilld.Registry](t)(s.RegistryCreate(ctx(t), &store.RegistryCreateParams{Name: "acme", Trust: skilld.TrustVerified}))
	var item *skilld.CatalogItem
	step("catalog item created", true, func() { item = newItem(t, s, reg.ID, "tool", 0) })
	step("catalog item published", true, func() {
		must[*skilld.CatalogItemVersion](t)(s.CatalogItemVersionCreate(ctx(t), &store.CatalogItemVersionCreateParams{ItemID: item.ID, Digest: newPackage(t, s, "tool 1"), Description: "v1", CreatedBy: "root"}))
	})
	var installed *skilld.Skill
	step("install", false, func() {
		installed = must[*skilld.Skill](t)(s.SkillCreate(ctx(t), &store.SkillCreateParams{WorkspaceID: ws.ID, Name: "tool", Description: "from acme",
			SourceType: skilld.SourceCatalog, CatalogItemID: item.ID, CatalogVersion: 1, Registry: "acme", Trust: skilld.TrustVerified}))
		must[*skilld.Install](t)(s.InstallCreate(ctx(t), &store.InstallCreateParams{WorkspaceID: ws.ID, ItemID: item.ID, SkillID: installed.ID, Version: 1}))
	})
	step("install updated", false, func() {
		must[*skilld.Install](t)(s.InstallUpdate(ctx(t), &store.InstallUpdateParams{WorkspaceID: ws.ID, ItemID: item.ID, Version: 1}))
	})
	step("delete", false, func() {
		if err := s.SkillDelete(ctx(t), &store.SkillDeleteParams{WorkspaceID: ws.ID, ID: installed.ID}); err != nil {
			t.Fatal(err)
		}
	})

	before := rev(ws)
	rollback := errors.New("roll back")
	err := s.Tx(ctx(t), func(q store.Querier) error {
		newSkill(t, q, ws.ID, "never")
		return rollback
	})
	if !errors.Is(err, rollback) {
		t.Fatalf("Tx = %v", err)
	}
	if got := rev(ws); got != before {
		t.Errorf("a rolled-back create moved the revision: %s → %s", before, got)
	}
	if _, err := s.SkillListRevision(ctx(t), "no-such-workspace"); skilld.ErrorCode(err) != skilld.ENOTFOUND {
		t.Errorf("revision of a missing workspace: %v", err)
	}
}
