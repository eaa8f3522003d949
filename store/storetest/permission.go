package storetest

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/permissions"
	"github.com/skilld/skilld/store"
)

// testPermissionApprovals: an approval is stored per skill and digest and
// read back as written, newest first; approving a digest again replaces
// it; a skill of another workspace is ENOTFOUND and gets nothing;
// deleting the skill deletes its approvals.
func testPermissionApprovals(t *testing.T, open Opener) {
	s := open(t)
	ws, other := newWorkspace(t, s, "perm-a"), newWorkspace(t, s, "perm-b")
	sk := newSkill(t, s, ws.ID, "fetcher")
	d1, d2 := "sha256:"+string(bytes.Repeat([]byte("1"), 64)), "sha256:"+string(bytes.Repeat([]byte("2"), 64))
	req := permissions.Request{Network: []string{"api.example.com", "*.cdn.net:443"}, Secrets: []string{"TOKEN"}}

	_, err := s.PermissionApprovalPut(ctx(t), &store.PermissionApprovalPutParams{WorkspaceID: other.ID, SkillID: sk.ID, Digest: d1, Approved: req, ApprovedBy: "x"})
	wantCode(t, err, skilld.ENOTFOUND)
	if got := must[[]store.PermissionApproval](t)(s.PermissionApprovalList(ctx(t), &store.PermissionApprovalListParams{WorkspaceID: ws.ID, SkillID: sk.ID})); len(got) != 0 {
		t.Fatalf("approvals before any: %+v", got)
	}

	a1 := must[*store.PermissionApproval](t)(s.PermissionApprovalPut(ctx(t), &store.PermissionApprovalPutParams{WorkspaceID: ws.ID, SkillID: sk.ID, Digest: d1, Approved: req, ApprovedBy: "admin"}))
	a2 := must[*store.PermissionApproval](t)(s.PermissionApprovalPut(ctx(t), &store.PermissionApprovalPutParams{WorkspaceID: ws.ID, SkillID: sk.ID, Digest: d2, ApprovedBy: "admin2"}))
	got := must[[]store.PermissionApproval](t)(s.PermissionApprovalList(ctx(t), &store.PermissionApprovalListParams{WorkspaceID: ws.ID, SkillID: sk.ID}))
	if len(got) != 2 {
		t.Fatalf("%d approvals, want 2", len(got))
	}
	byDigest := map[string]store.PermissionApproval{got[0].Digest: got[0], got[1].Digest: got[1]}
	for _, want := range []*store.PermissionApproval{a1, a2} {
		g := byDigest[want.Digest]
		if !reflect.DeepEqual(g.Approved, want.Approved) || g.ApprovedBy != want.ApprovedBy || !g.ApprovedAt.Equal(want.ApprovedAt) || g.SkillID != sk.ID {
			t.Errorf("approval of %s read back %+v, want %+v", want.Digest, g, want)
		}
	}
	if got[0].ApprovedAt.Before(got[1].ApprovedAt) {
		t.Errorf("approvals not newest first: %v then %v", got[0].ApprovedAt, got[1].ApprovedAt)
	}
	if got := byDigest[d2].Approved; got.Network == nil || got.Secrets == nil {
		t.Errorf("an empty approval reads back with null lists: %#v", got)
	}

	// Approving d1 again replaces its row.
	less := permissions.Request{Network: []string{"api.example.com"}}
	must[*store.PermissionApproval](t)(s.PermissionApprovalPut(ctx(t), &store.PermissionApprovalPutParams{WorkspaceID: ws.ID, SkillID: sk.ID, Digest: d1, Approved: less, ApprovedBy: "admin3"}))
	got = must[[]store.PermissionApproval](t)(s.PermissionApprovalList(ctx(t), &store.PermissionApprovalListParams{WorkspaceID: ws.ID, SkillID: sk.ID}))
	if len(got) != 2 || got[0].Digest != d1 || got[0].ApprovedBy != "admin3" || !reflect.DeepEqual(got[0].Approved.Network, less.Network) {
		t.Errorf("after approving again: %+v", got)
	}
	if got := must[[]store.PermissionApproval](t)(s.PermissionApprovalList(ctx(t), &store.PermissionApprovalListParams{WorkspaceID: other.ID, SkillID: sk.ID})); len(got) != 0 {
		t.Errorf("another workspace sees approvals: %+v", got)
	}

	if err := s.SkillDelete(ctx(t), &store.SkillDeleteParams{WorkspaceID: ws.ID, ID: sk.ID}); err != nil {
		t.Fatal(err)
	}
	if got := must[[]store.PermissionApproval](t)(s.PermissionApprovalList(ctx(t), &store.PermissionApprovalListParams{WorkspaceID: ws.ID, SkillID: sk.ID})); len(got) != 0 {
		t.Errorf("approvals outlive their skill: %+v", got)
	}
}

// testSecrets: a sealed value is stored and read back byte for byte with
// its key id; the list has names and times, sorted, never values; a put
// replaces; workspaces do not see each other's secrets; delete removes,
// and deleting or reading a missing secret is ENOTFOUND.
func testSecrets(t *testing.T, open Opener) {
	s := open(t)
	ws, other := newWorkspace(t, s, "sec-a"), newWorkspace(t, s, "sec-b")
	sealed := []byte{0, 1, 2, 0xff, 'x', 0}
	put := func(ws, name, key string, c []byte) *skilld.Secret {
		t.Helper()
		return must[*skilld.Secret](t)(s.SecretPut(ctx(t), &store.SecretPutParams{WorkspaceID: ws, Name: name, KeyID: key, Ciphertext: c, UpdatedBy: "admin"}))
	}
	put(ws.ID, "TOKEN", "k1", sealed)
	put(ws.ID, "A_KEY", "k1", []byte("other"))
	_, err := s.SecretPut(ctx(t), &store.SecretPutParams{WorkspaceID: "missing", Name: "X", KeyID: "k1", Ciphertext: sealed})
	wantCode(t, err, skilld.ENOTFOUND)

	got := must[*store.SealedSecret](t)(s.SecretGet(ctx(t), &store.SecretGetParams{WorkspaceID: ws.ID, Name: "TOKEN"}))
	if got.Name != "TOKEN" || got.KeyID != "k1" || !bytes.Equal(got.Ciphertext, sealed) || got.UpdatedBy != "admin" || got.UpdatedAt.IsZero() {
		t.Errorf("secret read back %+v", got)
	}
	list := must[[]skilld.Secret](t)(s.SecretList(ctx(t), &store.SecretListParams{WorkspaceID: ws.ID}))
	if len(list) != 2 || list[0].Name != "A_KEY" || list[1].Name != "TOKEN" {
		t.Errorf("list %+v", list)
	}
	if l := must[[]skilld.Secret](t)(s.SecretList(ctx(t), &store.SecretListParams{WorkspaceID: other.ID})); l == nil || len(l) != 0 {
		t.Errorf("another workspace lists %#v", l)
	}
	_, err = s.SecretGet(ctx(t), &store.SecretGetParams{WorkspaceID: other.ID, Name: "TOKEN"})
	wantCode(t, err, skilld.ENOTFOUND)

	put(ws.ID, "TOKEN", "k2", []byte("resealed"))
	got = must[*store.SealedSecret](t)(s.SecretGet(ctx(t), &store.SecretGetParams{WorkspaceID: ws.ID, Name: "TOKEN"}))
	if got.KeyID != "k2" || string(got.Ciphertext) != "resealed" {
		t.Errorf("after a second put: %+v", got)
	}

	wantCode(t, s.SecretDelete(ctx(t), &store.SecretGetParams{WorkspaceID: other.ID, Name: "TOKEN"}), skilld.ENOTFOUND)
	if err := s.SecretDelete(ctx(t), &store.SecretGetParams{WorkspaceID: ws.ID, Name: "TOKEN"}); err != nil {
		t.Fatal(err)
	}
	_, err = s.SecretGet(ctx(t), &store.SecretGetParams{WorkspaceID: ws.ID, Name: "TOKEN"})
	wantCode(t, err, skilld.ENOTFOUND)
	wantCode(t, s.SecretDelete(ctx(t), &store.SecretGetParams{WorkspaceID: ws.ID, Name: "TOKEN"}), skilld.ENOTFOUND)
}
