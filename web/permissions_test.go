package web_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/service"
)

// TestPermissionsSection: the skill page shows what the package asks for
// and that approval is needed, with an Approve button for admins only;
// after an admin approves, the page says approved and lists it.
func TestPermissionsSection(t *testing.T) {
	e := newEnv(t)
	sk := e.skill(e.member, map[string]string{
		"SKILL.md":    skillMD("fetch", "Fetches things.", "Fetch.\n"),
		"skilld.yaml": "network: [api.example.com]\nsecrets: [API_TOKEN]\n",
	})
	plain := e.skill(e.member, map[string]string{"SKILL.md": skillMD("plain", "Plain.", "Plain.\n")})

	viewer := e.signedIn(e.viewerTok)
	p := viewer.get("/ui/skills/" + sk.ID)
	if st := element(t, p, "permissions-state"); !strings.Contains(st, "Approval needed") {
		t.Errorf("state: %s", st[:min(len(st), 200)])
	}
	if list := element(t, p, "permissions"); !strings.Contains(list, "<code>api.example.com</code>") || !strings.Contains(list, "<code>API_TOKEN</code>") {
		t.Errorf("requested: %s", list[:min(len(list), 400)])
	}
	if strings.Contains(p.body, `id="approve-permissions"`) {
		t.Error("a viewer sees the Approve button")
	}
	if st := element(t, viewer.get("/ui/skills/"+plain.ID), "permissions-state"); !strings.Contains(st, "asks for no network access and no secrets") {
		t.Errorf("plain state: %s", st[:min(len(st), 200)])
	}

	admin := e.signedIn(e.adminTok)
	p = admin.get("/ui/skills/" + sk.ID)
	form := element(t, p, "approve-permissions")
	if !strings.Contains(form, `name="digest" value="`+sk.Digest+`"`) {
		t.Fatalf("approve form: %s", form[:min(len(form), 400)])
	}
	if r := admin.post("/ui/skills/"+sk.ID+"/permissions/approve", url.Values{"csrf": {csrfOf(t, p)}, "digest": {sk.Digest}}); r.status != 303 {
		t.Fatalf("approve: %d %s", r.status, r.body)
	}
	done := admin.get("/ui/skills/" + sk.ID)
	if st := element(t, done, "permissions-state"); done.status != 200 || !strings.Contains(st, "Approved") {
		t.Errorf("after approving (%d): %s", done.status, st[:min(len(st), 200)])
	}
	if strings.Contains(done.body, `id="approve-permissions"`) {
		t.Error("the Approve button stays after approval")
	}
	if list := element(t, done, "permissions"); !strings.Contains(list, "Approved network") {
		t.Errorf("approved list: %s", list[:min(len(list), 400)])
	}
}

// A request an install rule approves beforehand reads as approved by that
// rule, with nothing for an admin to click.
func TestPermissionsPreapprovedByPolicy(t *testing.T) {
	e := newEnv(t)
	sk := e.skill(e.member, map[string]string{
		"SKILL.md":    skillMD("fetch", "Fetches things.", "Fetch.\n"),
		"skilld.yaml": "network: [api.example.com]\n",
	})
	if _, err := e.svc.PutPolicy(t.Context(), e.admin, service.PutPolicyParams{InstallRules: []skilld.InstallRule{
		{Effect: skilld.EffectAllow, ApprovePermissions: &skilld.PermissionGrant{Network: []string{"*.example.com"}}}}}); err != nil {
		t.Fatal(err)
	}
	p := e.signedIn(e.adminTok).get("/ui/skills/" + sk.ID)
	if st := element(t, p, "permissions-state"); !strings.Contains(st, "Approved by install policy rule 1.") {
		t.Errorf("state: %s", st)
	}
	if strings.Contains(p.body, `id="approve-permissions"`) {
		t.Error("an Approve button for a request the policy approved")
	}
}
