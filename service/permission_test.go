package service_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store/storetest"
)

func TestPermissions(t *testing.T) {
	forDrivers(t, func(t *testing.T, open storetest.Opener) { testPermissions(t, open) })
}

func publishDeclaring(t *testing.T, e *env, name, decl string) *service.PublishedItem {
	t.Helper()
	files := map[string]string{name + "/SKILL.md": skillMD(name, "Fetches things.")}
	if decl != "" {
		files[name+"/skilld.yaml"] = decl
	}
	return must[*service.PublishedItem](t)(e.svc.PublishCatalogItem(t.Context(), e.root, service.PublishCatalogItemParams{Registry: "acme", Archive: zipOf(t, files)}))
}

// testPermissions: a package asking for nothing is "none"; one asking is
// approval_needed and its runs get empty grants until an admin approves
// its digest; an update asking for no more goes through on the earlier
// approval, one asking for more is held (ECONFLICT) with the pin kept
// until its digest is approved; a digest not of the skill is refused.
func testPermissions(t *testing.T, open storetest.Opener) {
	e := newEnv(t, open, service.Config{}, nil)
	ctx := t.Context()
	must[*skilld.Registry](t)(e.svc.CreateRegistry(ctx, e.root, service.CreateRegistryParams{Name: "acme", Trust: skilld.TrustCommunity}))
	ref := func(id string) service.GetSkillParams {
		return service.GetSkillParams{SkillRef: service.SkillRef{ID: id}}
	}

	publishDeclaring(t, e, "plain", "")
	plain := must[*service.SkillView](t)(e.svc.InstallSkill(ctx, e.member, service.InstallSkillParams{Item: "acme/plain"}))
	if p := must[*service.SkillPermissions](t)(e.svc.GetSkillPermissions(ctx, e.viewer, ref(plain.ID))); p.State != service.PermissionsNone || p.Approved != nil || p.Requested.Network == nil {
		t.Errorf("a package asking for nothing: %+v", p)
	}

	v1 := publishDeclaring(t, e, "fetch", "network: [api.example.com]\nsecrets: [API_TOKEN]\n")
	sk := must[*service.SkillView](t)(e.svc.InstallSkill(ctx, e.member, service.InstallSkillParams{Item: "acme/fetch"}))
	p := must[*service.SkillPermissions](t)(e.svc.GetSkillPermissions(ctx, e.viewer, ref(sk.ID)))
	if p.State != service.PermissionsNeeded || p.Approved != nil || p.Digest != v1.Digest ||
		!reflect.DeepEqual(p.Requested.Network, []string{"api.example.com"}) || !reflect.DeepEqual(p.Requested.Secrets, []string{"API_TOKEN"}) {
		t.Fatalf("before approval: %+v", p)
	}
	ag := must[*skilld.Agent](t)(e.svc.CreateAgent(ctx, e.member, service.AgentParams{
		Name: "a", Config: skilld.AgentConfig{Instruction: "Work.", Model: "openai:gpt-4o-mini"},
		Skills: []service.AgentSkillRef{{Skill: sk.ID}, {Skill: plain.ID}},
	}))
	grants := func() []*service.Grants {
		t.Helper()
		snap := must[*service.Snapshot](t)(e.svc.Resolve(ctx, e.member.WorkspaceID, ag))
		var out []*service.Grants
		for _, s := range snap.Skills {
			out = append(out, s.Grants)
		}
		return out
	}
	if g := grants(); g[0] == nil || len(g[0].Network) != 0 || len(g[0].Secrets) != 0 || g[1] != nil {
		t.Errorf("grants before approval: %+v, %+v", g[0], g[1])
	}

	approve := func(a service.Actor, digest string) (*service.SkillPermissions, error) {
		return e.svc.ApprovePermissions(ctx, a, service.ApprovePermissionsParams{SkillRef: service.SkillRef{ID: sk.ID}, Digest: digest})
	}
	_, err := approve(e.member, v1.Digest)
	wantCode(t, err, skilld.EFORBIDDEN)
	_, err = approve(e.admin, plain.Digest)
	wantCode(t, err, skilld.EINVALID)
	p = must[*service.SkillPermissions](t)(approve(e.admin, v1.Digest))
	if p.State != service.PermissionsApproved || p.Approved == nil || !reflect.DeepEqual(*p.Approved, p.Requested) || p.ApprovedDigest != v1.Digest {
		t.Fatalf("after approval: %+v", p)
	}
	if g := grants(); !reflect.DeepEqual(g[0], &service.Grants{Network: []string{"api.example.com"}, Secrets: []string{"API_TOKEN"}}) {
		t.Errorf("grants after approval: %+v", g[0])
	}

	// Version 2 asks for less: the approval of version 1 covers it.
	publishDeclaring(t, e, "fetch", "network: [\"api.example.com:443\"]\n")
	up := must[*service.SkillView](t)(e.svc.UpdateInstalledSkill(ctx, e.admin, service.UpdateInstalledSkillParams{SkillRef: service.SkillRef{ID: sk.ID}}))
	if up.CatalogVersion != 2 {
		t.Fatalf("update to v2: %+v", up.Skill)
	}
	if p := must[*service.SkillPermissions](t)(e.svc.GetSkillPermissions(ctx, e.viewer, ref(sk.ID))); p.State != service.PermissionsApproved || p.ApprovedDigest != v1.Digest {
		t.Errorf("v2 under v1's approval: %+v", p)
	}

	// Version 3 asks for more: held, the pin stays at 2.
	v3 := publishDeclaring(t, e, "fetch", "network: [api.example.com, upload.example.net]\nsecrets: [API_TOKEN]\n")
	_, err = e.svc.UpdateInstalledSkill(ctx, e.admin, service.UpdateInstalledSkillParams{SkillRef: service.SkillRef{ID: sk.ID}})
	wantCode(t, err, skilld.ECONFLICT)
	if msg := skilld.ErrorMessage(err); !strings.Contains(msg, "approval_needed") || !strings.Contains(msg, v3.Digest) || !strings.Contains(msg, "upload.example.net") {
		t.Errorf("held update says %q", msg)
	}
	if cur := must[*service.SkillView](t)(e.svc.GetSkill(ctx, e.viewer, ref(sk.ID))); cur.CatalogVersion != 2 {
		t.Errorf("a held update moved the pin to %d", cur.CatalogVersion)
	}
	must[*service.SkillPermissions](t)(approve(e.admin, v3.Digest))
	up = must[*service.SkillView](t)(e.svc.UpdateInstalledSkill(ctx, e.admin, service.UpdateInstalledSkillParams{SkillRef: service.SkillRef{ID: sk.ID}}))
	if up.CatalogVersion != 3 || up.Digest != v3.Digest {
		t.Fatalf("update after approval: %+v", up.Skill)
	}
	if p := must[*service.SkillPermissions](t)(e.svc.GetSkillPermissions(ctx, e.viewer, ref(sk.ID))); p.State != service.PermissionsApproved || p.ApprovedDigest != v3.Digest {
		t.Errorf("v3 approved: %+v", p)
	}
	// Another workspace's approvals are its own.
	theirs := must[*service.SkillView](t)(e.svc.InstallSkill(ctx, e.other, service.InstallSkillParams{Item: "acme/fetch"}))
	if p := must[*service.SkillPermissions](t)(e.svc.GetSkillPermissions(ctx, e.other, ref(theirs.ID))); p.State != service.PermissionsNeeded {
		t.Errorf("another workspace's install: %+v", p)
	}
}

func TestPermissionPreapproval(t *testing.T) {
	forDrivers(t, func(t *testing.T, open storetest.Opener) { testPermissionPreapproval(t, open) })
}

// testPermissionPreapproval: an allow rule's approve_permissions approves
// beforehand a request its hosts and secrets cover, for the skills it
// matches by registry and trust; a request asking for more, or a skill the
// rule does not match, still needs an admin; a rule of another kind
// carrying it is refused naming the field.
func testPermissionPreapproval(t *testing.T, open storetest.Opener) {
	e := newEnv(t, open, service.Config{}, nil)
	ctx := t.Context()
	must[*skilld.Registry](t)(e.svc.CreateRegistry(ctx, e.root, service.CreateRegistryParams{Name: "acme", Trust: skilld.TrustCommunity}))
	ref := func(id string) service.GetSkillParams {
		return service.GetSkillParams{SkillRef: service.SkillRef{ID: id}}
	}
	state := func(id string) *service.SkillPermissions {
		t.Helper()
		return must[*service.SkillPermissions](t)(e.svc.GetSkillPermissions(ctx, e.viewer, ref(id)))
	}
	publishDeclaring(t, e, "fetch", "network: [api.example.com]\nsecrets: [API_TOKEN]\n")
	publishDeclaring(t, e, "wide", "network: [api.example.com, other.org]\n")
	fetch := must[*service.SkillView](t)(e.svc.InstallSkill(ctx, e.member, service.InstallSkillParams{Item: "acme/fetch"}))
	wide := must[*service.SkillView](t)(e.svc.InstallSkill(ctx, e.member, service.InstallSkillParams{Item: "acme/wide"}))
	local := must[*service.SkillView](t)(e.svc.CreateSkill(ctx, e.member, service.CreateSkillParams{Files: map[string]string{
		"SKILL.md": skillMD("mine", "Fetches mine."), "skilld.yaml": "network: [api.example.com]\n"}}))

	grant := &skilld.PermissionGrant{Network: []string{"*.EXAMPLE.com"}, Secrets: []string{"API_TOKEN"}}
	put := func(rules ...skilld.InstallRule) error {
		_, err := e.svc.PutPolicy(ctx, e.admin, service.PutPolicyParams{InstallRules: rules})
		return err
	}
	// Trusted at least "verified": acme (community) is not matched.
	if err := put(skilld.InstallRule{Effect: skilld.EffectAllow, Registry: "acme", MinTrust: skilld.TrustVerified, ApprovePermissions: grant}); err != nil {
		t.Fatal(err)
	}
	if p := state(fetch.ID); p.State != service.PermissionsNeeded {
		t.Errorf("a rule for trusted registries pre-approved a community skill: %+v", p)
	}
	if err := put(skilld.InstallRule{Effect: skilld.EffectAllow, Registry: "acme", ApprovePermissions: grant}); err != nil {
		t.Fatal(err)
	}
	if p := state(fetch.ID); p.State != service.PermissionsApproved || p.Approved == nil || !reflect.DeepEqual(p.Approved.Network, []string{"api.example.com"}) {
		t.Errorf("covered by the rule: %+v", p)
	}
	if p := state(wide.ID); p.State != service.PermissionsNeeded {
		t.Errorf("asking for a host the rule does not cover: %+v", p)
	}
	if p := state(local.ID); p.State != service.PermissionsNeeded {
		t.Errorf("a rule for registry acme pre-approved a skill written here: %+v", p)
	}
	// A rule naming no registry matches skills written here too; the run
	// gets the grants.
	if err := put(skilld.InstallRule{Effect: skilld.EffectAllow, ApprovePermissions: grant}); err != nil {
		t.Fatal(err)
	}
	if p := state(local.ID); p.State != service.PermissionsApproved {
		t.Errorf("a rule for every skill: %+v", p)
	}
	ag := must[*skilld.Agent](t)(e.svc.CreateAgent(ctx, e.member, service.AgentParams{Name: "a", Config: skilld.AgentConfig{Instruction: "Work.", Model: "openai:gpt-4o-mini"},
		Skills: []service.AgentSkillRef{{Skill: fetch.ID}, {Skill: wide.ID}}}))
	snap := must[*service.Snapshot](t)(e.svc.Resolve(ctx, e.member.WorkspaceID, ag))
	for _, s := range snap.Skills {
		want := 0
		if s.Name == "fetch" {
			want = 1
		}
		if s.Grants == nil || len(s.Grants.Network) != want {
			t.Errorf("grants of %s: %+v", s.Name, s.Grants)
		}
	}

	for field, rule := range map[string]skilld.InstallRule{
		"install_rules[0].approve_permissions":            {Effect: skilld.EffectDeny, ApprovePermissions: grant},
		"install_rules[0].approve_permissions.network[0]": {Effect: skilld.EffectAllow, ApprovePermissions: &skilld.PermissionGrant{Network: []string{"https://x.org/"}}},
		"install_rules[0].approve_permissions.secrets[0]": {Effect: skilld.EffectAllow, ApprovePermissions: &skilld.PermissionGrant{Secrets: []string{"LD_PRELOAD"}}},
	} {
		err := put(rule)
		var se *skilld.Error
		if !errors.As(err, &se) || se.Code != skilld.EINVALID || len(se.Details) == 0 || se.Details[0].Field != field {
			t.Errorf("%s: %v", field, err)
		}
	}
}
