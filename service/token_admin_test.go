package service_test

import (
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store/storetest"
)

// TestCreateInstanceAdminToken: only an instance admin mints one, always
// with the admin role; the token authenticates as an instance admin of the
// workspace it was made in. BootstrapTokenActive tells a live token from
// others without touching it.
func TestCreateInstanceAdminToken(t *testing.T) {
	forDrivers(t, func(t *testing.T, open storetest.Opener) { testCreateInstanceAdminToken(t, open) })
}

func testCreateInstanceAdminToken(t *testing.T, open storetest.Opener) {
	e := newEnv(t, open, service.Config{}, nil)
	ctx := t.Context()
	if _, err := e.svc.CreateInstanceAdminToken(ctx, e.admin, service.CreateTokenParams{Name: "x"}); skilld.ErrorCode(err) != skilld.EFORBIDDEN {
		t.Errorf("a workspace admin: %v", err)
	}
	if _, err := e.svc.CreateInstanceAdminToken(ctx, e.root, service.CreateTokenParams{Name: "x", Role: skilld.RoleViewer}); skilld.ErrorCode(err) != skilld.EINVALID {
		t.Errorf("role viewer: %v", err)
	}
	op := service.Actor{InstanceAdmin: true, Role: skilld.RoleAdmin, Name: "operator"}
	inTeam, err := e.svc.In(ctx, op, "team")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := e.svc.CreateInstanceAdminToken(ctx, inTeam, service.CreateTokenParams{Name: "recovered"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := e.svc.Authenticate(ctx, tok.Secret)
	if err != nil || !a.InstanceAdmin || a.Role != skilld.RoleAdmin || a.WorkspaceID != inTeam.WorkspaceID || tok.CreatedBy != "operator" {
		t.Errorf("the token: %+v %+v %v", tok.Token, a, err)
	}
	for secret, want := range map[string]bool{tok.Secret: true, "skd_notatokenatall000000000000000": false} {
		if got, err := e.svc.BootstrapTokenActive(ctx, secret); got != want || err != nil {
			t.Errorf("BootstrapTokenActive(%q) = %v, %v; want %v", secret, got, err, want)
		}
	}
	if err := e.svc.RevokeToken(ctx, e.root, service.RevokeTokenParams{ID: tok.ID}); err == nil {
		t.Error("revoked from another workspace")
	}
	if err := e.svc.RevokeToken(ctx, inTeam, service.RevokeTokenParams{ID: tok.ID}); err != nil {
		t.Fatal(err)
	}
	if got, _ := e.svc.BootstrapTokenActive(ctx, tok.Secret); got {
		t.Error("a revoked token is active")
	}
}
