package storetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

func testMigrations(t *testing.T, open Opener) {
	s := open(t)
	applied, err := s.Migrate(ctx(t))
	if err != nil || len(applied) != 0 {
		t.Fatalf("re-running migrations applied %v, err %v; want nothing", applied, err)
	}
	status := must[[]store.Migration](t)(s.MigrationStatus(ctx(t)))
	if len(status) == 0 {
		t.Fatal("no migrations reported")
	}
	for i, m := range status {
		if !m.Applied || m.Version != i+1 || m.Name == "" {
			t.Errorf("migration %d: %+v", i, m)
		}
	}
}

func testWorkspaces(t *testing.T, open Opener) {
	s := open(t)
	before := time.Now().UTC().Add(-time.Second)
	a := newWorkspace(t, s, "alpha")
	if a.ID == "" || a.Name != "alpha" || a.CreatedAt.Before(before) || a.CreatedAt.Location() != time.UTC {
		t.Fatalf("created %+v", a)
	}
	_, err := s.WorkspaceCreate(ctx(t), &store.WorkspaceCreateParams{Name: "alpha"})
	wantCode(t, err, skilld.ECONFLICT)
	for _, name := range []string{"gamma", "beta", "Zeta"} {
		newWorkspace(t, s, name)
	}
	got := must[*skilld.Workspace](t)(s.WorkspaceGet(ctx(t), &store.WorkspaceGetParams{ID: a.ID}))
	if !reflect.DeepEqual(got, a) {
		t.Errorf("get by id = %+v, want %+v", got, a)
	}
	got = must[*skilld.Workspace](t)(s.WorkspaceGet(ctx(t), &store.WorkspaceGetParams{Name: "alpha"}))
	if got.ID != a.ID {
		t.Errorf("get by name = %+v", got)
	}
	_, err = s.WorkspaceGet(ctx(t), &store.WorkspaceGetParams{Name: "missing"})
	wantCode(t, err, skilld.ENOTFOUND)

	list := must[[]*skilld.Workspace](t)(s.WorkspaceList(ctx(t), &store.WorkspaceListParams{Page: store.Page{Limit: 2, Offset: 1}}))
	if len(list) != 2 || list[0].Name != "alpha" || list[1].Name != "beta" {
		t.Errorf("page 2 of names in byte order = %v", names(list))
	}

	// Settings change only when given.
	if a.TaskRetention != "" {
		t.Errorf("a new workspace's task retention is %q, want the server's", a.TaskRetention)
	}
	week := "168h"
	got = must[*skilld.Workspace](t)(s.WorkspaceUpdate(ctx(t), &store.WorkspaceUpdateParams{ID: a.ID, TaskRetention: &week}))
	if got.TaskRetention != week || got.Name != "alpha" {
		t.Errorf("updated %+v", got)
	}
	got = must[*skilld.Workspace](t)(s.WorkspaceUpdate(ctx(t), &store.WorkspaceUpdateParams{ID: a.ID}))
	if got.TaskRetention != week {
		t.Errorf("an empty update changed the retention: %+v", got)
	}
	if list := must[[]*skilld.Workspace](t)(s.WorkspaceList(ctx(t), &store.WorkspaceListParams{})); list[1].TaskRetention != week || list[2].TaskRetention != "" {
		t.Errorf("listed retentions %q, %q", list[1].TaskRetention, list[2].TaskRetention)
	}
	_, err = s.WorkspaceUpdate(ctx(t), &store.WorkspaceUpdateParams{ID: "missing", TaskRetention: &week})
	wantCode(t, err, skilld.ENOTFOUND)
	_, err = s.WorkspaceUpdate(ctx(t), &store.WorkspaceUpdateParams{ID: "missing"})
	wantCode(t, err, skilld.ENOTFOUND)
	// Task caps: nil is the server's default, 0 no cap, a negative value
	// clears the workspace's own; a field left out stays.
	four, zero := 4, 0
	up := must[*skilld.Workspace](t)(s.WorkspaceUpdate(ctx(t), &store.WorkspaceUpdateParams{ID: a.ID, MaxRunningTasks: &four, MaxQueuedTasks: &zero}))
	if up.ID != a.ID || up.Name != "alpha" || !up.CreatedAt.Equal(a.CreatedAt) || up.MaxRunningTasks == nil || *up.MaxRunningTasks != 4 || up.MaxQueuedTasks == nil || *up.MaxQueuedTasks != 0 {
		t.Fatalf("updated %+v", up)
	}
	if got := must[*skilld.Workspace](t)(s.WorkspaceGet(ctx(t), &store.WorkspaceGetParams{Name: "alpha"})); !reflect.DeepEqual(got, up) {
		t.Errorf("read back %+v, want %+v", got, up)
	}
	unset := -1
	up = must[*skilld.Workspace](t)(s.WorkspaceUpdate(ctx(t), &store.WorkspaceUpdateParams{ID: a.ID, MaxQueuedTasks: &unset}))
	if up.MaxRunningTasks == nil || *up.MaxRunningTasks != 4 || up.MaxQueuedTasks != nil {
		t.Errorf("after clearing the queued cap: %+v", up)
	}
	if got := must[*skilld.Workspace](t)(s.WorkspaceUpdate(ctx(t), &store.WorkspaceUpdateParams{ID: a.ID})); !reflect.DeepEqual(got, up) {
		t.Errorf("an update of nothing gave %+v, want %+v", got, up)
	}
	for _, w := range must[[]*skilld.Workspace](t)(s.WorkspaceList(ctx(t), &store.WorkspaceListParams{})) {
		if w.ID == a.ID && !reflect.DeepEqual(w, up) {
			t.Errorf("listed %+v, want %+v", w, up)
		}
	}
	_, err = s.WorkspaceUpdate(ctx(t), &store.WorkspaceUpdateParams{ID: "no-such-workspace", MaxRunningTasks: &four})
	wantCode(t, err, skilld.ENOTFOUND)
	up = must[*skilld.Workspace](t)(s.WorkspaceUpdate(ctx(t), &store.WorkspaceUpdateParams{ID: a.ID, MaxRunningTasks: &unset}))
	if up.MaxRunningTasks != nil || up.MaxQueuedTasks != nil {
		t.Errorf("after clearing both caps: %+v", up)
	}

	// Deleting a workspace takes everything it owns with it.
	sk := newSkill(t, s, a.ID, "doomed")
	if err := s.WorkspaceDelete(ctx(t), &store.WorkspaceDeleteParams{ID: a.ID}); err != nil {
		t.Fatal(err)
	}
	_, err = s.SkillGet(ctx(t), &store.SkillGetParams{WorkspaceID: a.ID, ID: sk.ID})
	wantCode(t, err, skilld.ENOTFOUND)
	wantCode(t, s.WorkspaceDelete(ctx(t), &store.WorkspaceDeleteParams{ID: a.ID}), skilld.ENOTFOUND)
}

func names(ws []*skilld.Workspace) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.Name
	}
	return out
}

func testMembersAndTokens(t *testing.T, open Opener) {
	s := open(t)
	ws := newWorkspace(t, s, "team")
	m := must[*skilld.Member](t)(s.MemberCreate(ctx(t), &store.MemberCreateParams{WorkspaceID: ws.ID, Name: "ada", Role: skilld.RoleAdmin}))
	if m.Role != skilld.RoleAdmin {
		t.Errorf("member %+v", m)
	}
	_, err := s.MemberCreate(ctx(t), &store.MemberCreateParams{WorkspaceID: ws.ID, Name: "ada", Role: skilld.RoleViewer})
	wantCode(t, err, skilld.ECONFLICT)
	_, err = s.MemberCreate(ctx(t), &store.MemberCreateParams{WorkspaceID: ws.ID, Name: "bob", Role: "owner"})
	wantCode(t, err, skilld.EINVALID)
	_, err = s.MemberCreate(ctx(t), &store.MemberCreateParams{WorkspaceID: "no-such-workspace", Name: "x", Role: skilld.RoleViewer})
	wantCode(t, err, skilld.ENOTFOUND)

	exp := time.Now().UTC().Add(time.Hour).Truncate(time.Microsecond)
	tok := must[*skilld.Token](t)(s.TokenCreate(ctx(t), &store.TokenCreateParams{
		WorkspaceID: ws.ID, MemberID: m.ID, Name: "ci", Role: skilld.RoleMember, Hash: "h1", ExpiresAt: &exp, CreatedBy: "ada",
	}))
	if tok.MemberID != m.ID || tok.RevokedAt != nil || !tok.ExpiresAt.Equal(exp) || !tok.Active(time.Now()) {
		t.Errorf("token %+v", tok)
	}
	_, err = s.TokenCreate(ctx(t), &store.TokenCreateParams{WorkspaceID: ws.ID, Name: "dup", Role: skilld.RoleMember, Hash: "h1"})
	wantCode(t, err, skilld.ECONFLICT)
	admin := must[*skilld.Token](t)(s.TokenCreate(ctx(t), &store.TokenCreateParams{WorkspaceID: ws.ID, Name: "root", Role: skilld.RoleAdmin, Hash: "h2", InstanceAdmin: true}))
	got := must[*skilld.Token](t)(s.TokenGetByHash(ctx(t), &store.TokenGetByHashParams{Hash: "h2"}))
	if got.ID != admin.ID || !got.InstanceAdmin || got.MemberID != "" {
		t.Errorf("by hash: %+v", got)
	}
	_, err = s.TokenGetByHash(ctx(t), &store.TokenGetByHashParams{Hash: "nope"})
	wantCode(t, err, skilld.ENOTFOUND)

	at := time.Now().UTC()
	if err := s.TokenTouch(ctx(t), &store.TokenTouchParams{ID: tok.ID, At: at}); err != nil {
		t.Fatal(err)
	}
	if err := s.TokenRevoke(ctx(t), &store.TokenRevokeParams{WorkspaceID: ws.ID, ID: tok.ID, At: at}); err != nil {
		t.Fatal(err)
	}
	got = must[*skilld.Token](t)(s.TokenGetByHash(ctx(t), &store.TokenGetByHashParams{Hash: "h1"}))
	if got.RevokedAt == nil || got.LastUsedAt == nil || got.Active(time.Now()) {
		t.Errorf("revoked token %+v", got)
	}
	other := newWorkspace(t, s, "other")
	wantCode(t, s.TokenRevoke(ctx(t), &store.TokenRevokeParams{WorkspaceID: other.ID, ID: admin.ID, At: at}), skilld.ENOTFOUND)
	if list := must[[]*skilld.Token](t)(s.TokenList(ctx(t), &store.TokenListParams{WorkspaceID: ws.ID})); len(list) != 2 {
		t.Errorf("tokens listed: %d", len(list))
	}
}
