package storetest

import (
	"errors"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

func testTransactions(t *testing.T, open Opener) {
	s := open(t)
	boom := errors.New("boom")
	err := s.Tx(ctx(t), func(q store.Querier) error {
		ws := must[*skilld.Workspace](t)(q.WorkspaceCreate(ctx(t), &store.WorkspaceCreateParams{Name: "rolled-back"}))
		sk := newSkill(t, q, ws.ID, "s")
		d := newPackage(t, q, "p")
		must[*skilld.SkillVersion](t)(q.SkillVersionCreate(ctx(t), &store.SkillVersionCreateParams{WorkspaceID: ws.ID, SkillID: sk.ID, Digest: d}))
		// Reads inside the transaction see its own writes.
		if _, err := q.SkillGet(ctx(t), &store.SkillGetParams{WorkspaceID: ws.ID, ID: sk.ID}); err != nil {
			t.Errorf("read inside tx: %v", err)
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Tx returned %v, want the function's error", err)
	}
	_, err = s.WorkspaceGet(ctx(t), &store.WorkspaceGetParams{Name: "rolled-back"})
	wantCode(t, err, skilld.ENOTFOUND)
	ref := must[map[string]bool](t)(s.BlobReferenced(ctx(t), &store.BlobReferencedParams{Digests: []string{"sha256:" + "x"}}))
	if len(ref) != 0 {
		t.Errorf("rolled-back package files are still referenced: %v", ref)
	}

	func() {
		defer func() {
			if recover() == nil {
				t.Error("a panic inside Tx must propagate")
			}
		}()
		s.Tx(ctx(t), func(q store.Querier) error {
			must[*skilld.Workspace](t)(q.WorkspaceCreate(ctx(t), &store.WorkspaceCreateParams{Name: "panicked"}))
			panic("boom")
		})
	}()
	_, err = s.WorkspaceGet(ctx(t), &store.WorkspaceGetParams{Name: "panicked"})
	wantCode(t, err, skilld.ENOTFOUND)

	// A failed statement inside a transaction fails the transaction, and
	// the store stays usable afterwards.
	err = s.Tx(ctx(t), func(q store.Querier) error {
		must[*skilld.Workspace](t)(q.WorkspaceCreate(ctx(t), &store.WorkspaceCreateParams{Name: "first"}))
		_, err := q.WorkspaceCreate(ctx(t), &store.WorkspaceCreateParams{Name: "first"})
		return err
	})
	wantCode(t, err, skilld.ECONFLICT)
	_, err = s.WorkspaceGet(ctx(t), &store.WorkspaceGetParams{Name: "first"})
	wantCode(t, err, skilld.ENOTFOUND)
	newWorkspace(t, s, "after")
}

// testWorkspaceIsolation checks that no method reaches another
// workspace's objects through an ID.
func testWorkspaceIsolation(t *testing.T, open Opener) {
	s := open(t)
	a, b := newWorkspace(t, s, "a"), newWorkspace(t, s, "b")
	sk := newSkill(t, s, a.ID, "secret")
	d := newPackage(t, s, "p")
	must[*skilld.SkillVersion](t)(s.SkillVersionCreate(ctx(t), &store.SkillVersionCreateParams{WorkspaceID: a.ID, SkillID: sk.ID, Digest: d}))

	_, err := s.SkillGet(ctx(t), &store.SkillGetParams{WorkspaceID: b.ID, ID: sk.ID})
	wantCode(t, err, skilld.ENOTFOUND)
	_, err = s.SkillUpdate(ctx(t), &store.SkillUpdateParams{WorkspaceID: b.ID, ID: sk.ID, Name: ptr("stolen")})
	wantCode(t, err, skilld.ENOTFOUND)
	wantCode(t, s.SkillDelete(ctx(t), &store.SkillDeleteParams{WorkspaceID: b.ID, ID: sk.ID}), skilld.ENOTFOUND)
	_, err = s.SkillVersionCreate(ctx(t), &store.SkillVersionCreateParams{WorkspaceID: b.ID, SkillID: sk.ID, Digest: d})
	wantCode(t, err, skilld.ENOTFOUND)
	_, err = s.SkillVersionGet(ctx(t), &store.SkillVersionGetParams{WorkspaceID: b.ID, SkillID: sk.ID, Number: 1})
	wantCode(t, err, skilld.ENOTFOUND)
	if vs := must[[]*skilld.SkillVersion](t)(s.SkillVersionList(ctx(t), &store.SkillVersionListParams{WorkspaceID: b.ID, SkillID: sk.ID})); len(vs) != 0 {
		t.Errorf("listed another workspace's versions: %v", vs)
	}
	if res := must[*store.SkillListResult](t)(s.SkillList(ctx(t), &store.SkillListParams{WorkspaceID: b.ID})); res.Total != 0 {
		t.Errorf("listed another workspace's skills: %v", listNames(res))
	}
	if got := must[*skilld.Skill](t)(s.SkillGet(ctx(t), &store.SkillGetParams{WorkspaceID: a.ID, ID: sk.ID})); got.Name != "secret" {
		t.Errorf("skill changed through another workspace: %+v", got)
	}
}
