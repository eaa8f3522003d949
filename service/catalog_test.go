package service_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store/storetest"
)

func TestCatalogAndPolicy(t *testing.T) {
	forDrivers(t, func(t *testing.T, open storetest.Opener) {
		t.Run("InstallUpdateFork", func(t *testing.T) { testInstallUpdateFork(t, open) })
		t.Run("Policy", func(t *testing.T) { testPolicy(t, open) })
		t.Run("Agents", func(t *testing.T) { testAgents(t, open) })
		t.Run("PathImport", func(t *testing.T) { testPathImport(t, open) })
		t.Run("ConcurrentInstall", func(t *testing.T) { testConcurrentInstall(t, open) })
	})
}

func publish(t *testing.T, e *env, registry, name, desc string) *service.PublishedItem {
	t.Helper()
	return must[*service.PublishedItem](t)(e.svc.PublishCatalogItem(t.Context(), e.root, service.PublishCatalogItemParams{
		Registry: registry, Archive: zipOf(t, map[string]string{name + "/SKILL.md": skillMD(name, desc)}),
	}))
}

func testInstallUpdateFork(t *testing.T, open storetest.Opener) {
	e := newEnv(t, open, service.Config{}, nil)
	ctx := t.Context()
	_, err := e.svc.CreateRegistry(ctx, e.admin, service.CreateRegistryParams{Name: "acme", Trust: skilld.TrustCommunity})
	wantCode(t, err, skilld.EFORBIDDEN)
	_, err = e.svc.CreateRegistry(ctx, e.root, service.CreateRegistryParams{Name: "github", Trust: skilld.TrustOfficial})
	wantCode(t, err, skilld.EINVALID)
	must[*skilld.Registry](t)(e.svc.CreateRegistry(ctx, e.root, service.CreateRegistryParams{Name: "acme", Trust: skilld.TrustCommunity}))
	p1 := publish(t, e, "acme", "lint", "Lint v1")
	if p1.Version != 1 || p1.Name != "lint" || p1.Registry != "acme" {
		t.Fatalf("published %+v", p1)
	}
	_, err = e.svc.PublishCatalogItem(ctx, e.admin, service.PublishCatalogItemParams{Registry: "acme", Archive: zipOf(t, map[string]string{"SKILL.md": skillMD("x", "d")})})
	wantCode(t, err, skilld.EFORBIDDEN)

	in := must[*service.SkillView](t)(e.svc.InstallSkill(ctx, e.member, service.InstallSkillParams{Item: "acme/lint"}))
	if in.SourceType != skilld.SourceCatalog || in.CatalogItem != "acme/lint" || in.CatalogVersion != 1 || in.UpdateAvailable || in.Digest != p1.Digest || in.Registry != "acme" {
		t.Fatalf("installed %+v", in.Skill)
	}
	again := must[*service.SkillView](t)(e.svc.InstallSkill(ctx, e.member, service.InstallSkillParams{Item: "acme/lint"}))
	if again.ID != in.ID || !again.Existing || in.Existing {
		t.Errorf("installing again must return the existing skill, marked existing: first %v, again %v (%v)", in.Existing, again.Existing, again.ID == in.ID)
	}
	_, err = e.svc.InstallSkill(ctx, e.member, service.InstallSkillParams{Item: "acme/missing"})
	wantCode(t, err, skilld.ENOTFOUND)
	// Another workspace installs its own copy, sharing the package.
	theirs := must[*service.SkillView](t)(e.svc.InstallSkill(ctx, e.other, service.InstallSkillParams{Item: "acme/lint"}))
	if theirs.ID == in.ID || theirs.Digest != in.Digest {
		t.Errorf("other workspace's install %+v", theirs.Skill)
	}

	p2 := publish(t, e, "acme", "lint", "Lint v2")
	cur := must[*service.SkillView](t)(e.svc.GetSkill(ctx, e.viewer, service.GetSkillParams{SkillRef: service.SkillRef{ID: in.ID}}))
	if !cur.UpdateAvailable || cur.CatalogLatestVersion != 2 {
		t.Fatalf("after v2: %+v", cur.Skill)
	}
	_, err = e.svc.UpdateInstalledSkill(ctx, e.member, service.UpdateInstalledSkillParams{SkillRef: service.SkillRef{ID: in.ID}})
	wantCode(t, err, skilld.EFORBIDDEN)
	up := must[*service.SkillView](t)(e.svc.UpdateInstalledSkill(ctx, e.admin, service.UpdateInstalledSkillParams{SkillRef: service.SkillRef{ID: in.ID}}))
	if up.CatalogVersion != 2 || up.UpdateAvailable || up.Digest != p2.Digest || up.Version != 2 || up.Description != "Lint v2" {
		t.Fatalf("updated %+v", up.Skill)
	}
	// Editing forks: a new workspace version, and updates stop applying.
	forked := must[*service.SkillView](t)(e.svc.ReplaceSkillFiles(ctx, e.member, service.ReplaceSkillFilesParams{SkillRef: service.SkillRef{ID: in.ID},
		Files: map[string]string{"SKILL.md": skillMD("lint", "Our lint")}}))
	if !forked.Forked || forked.UpdateAvailable || forked.Version != 3 || forked.CatalogItemID == "" {
		t.Fatalf("forked %+v", forked.Skill)
	}
	publish(t, e, "acme", "lint", "Lint v3")
	_, err = e.svc.UpdateInstalledSkill(ctx, e.admin, service.UpdateInstalledSkillParams{SkillRef: service.SkillRef{ID: in.ID}})
	wantCode(t, err, skilld.ECONFLICT)
	reset := must[*service.SkillView](t)(e.svc.UpdateInstalledSkill(ctx, e.admin, service.UpdateInstalledSkillParams{SkillRef: service.SkillRef{ID: in.ID}, Reset: true}))
	if reset.Forked || reset.CatalogVersion != 3 || reset.Version != 4 {
		t.Errorf("reset %+v", reset.Skill)
	}
	vs := must[*service.VersionList](t)(e.svc.ListSkillVersions(ctx, e.viewer, service.ListSkillVersionsParams{SkillRef: service.SkillRef{ID: in.ID}}))
	if len(vs.Items) != 4 {
		t.Errorf("history has %d versions, want 4 (nothing rewritten)", len(vs.Items))
	}

	page := must[*service.SkillPage](t)(e.svc.ListSkills(ctx, e.viewer, service.ListSkillsParams{IncludeCatalog: true}))
	if page.Total != 1 || page.Items[0].Kind != "skill" {
		t.Errorf("an installed item is listed once, as the workspace's skill: %+v", page)
	}
	publish(t, e, "acme", "format", "Formats code")
	page = must[*service.SkillPage](t)(e.svc.ListSkills(ctx, e.viewer, service.ListSkillsParams{IncludeCatalog: true}))
	if page.Total != 2 || page.Items[1].Kind != "catalog" || page.Items[1].CatalogItem.Name != "format" {
		t.Errorf("catalog projection missing: %+v", page.Items)
	}
	items := must[*service.CatalogPage](t)(e.svc.ListCatalogItems(ctx, e.viewer, service.ListCatalogItemsParams{Search: "FORMATS"}))
	if items.Total != 1 {
		t.Errorf("catalog search: %+v", items)
	}
}

func testPolicy(t *testing.T, open storetest.Opener) {
	e := newEnv(t, open, service.Config{}, nil)
	ctx := t.Context()
	for _, reg := range []struct {
		name  string
		trust skilld.Trust
	}{{"acme", skilld.TrustCommunity}, {"corp", skilld.TrustOfficial}, {"partner", skilld.TrustVerified}} {
		must[*skilld.Registry](t)(e.svc.CreateRegistry(ctx, e.root, service.CreateRegistryParams{Name: reg.name, Trust: reg.trust}))
		publish(t, e, reg.name, reg.name+"-skill", "d")
	}
	_, err := e.svc.PutPolicy(ctx, e.member, service.PutPolicyParams{})
	wantCode(t, err, skilld.EFORBIDDEN)
	_, err = e.svc.PutPolicy(ctx, e.admin, service.PutPolicyParams{InstallRules: []skilld.InstallRule{{Effect: "block"}}})
	wantCode(t, err, skilld.EINVALID)
	must[*skilld.Policy](t)(e.svc.PutPolicy(ctx, e.admin, service.PutPolicyParams{InstallRules: []skilld.InstallRule{{Effect: skilld.EffectDeny, Registry: "acme"}}}))
	_, err = e.svc.InstallSkill(ctx, e.member, service.InstallSkillParams{Item: "acme/acme-skill"})
	wantCode(t, err, skilld.EFORBIDDEN)
	if !strings.Contains(err.Error(), `rule 1 (deny registry "acme")`) {
		t.Errorf("refusal should name the rule: %v", err)
	}
	must[*service.SkillView](t)(e.svc.InstallSkill(ctx, e.member, service.InstallSkillParams{Item: "corp/corp-skill"}))

	// A rule written after the install withholds the skill at run time.
	partner := must[*service.SkillView](t)(e.svc.InstallSkill(ctx, e.member, service.InstallSkillParams{Item: "partner/partner-skill"}))
	must[*skilld.Policy](t)(e.svc.PutPolicy(ctx, e.admin, service.PutPolicyParams{InstallRules: []skilld.InstallRule{{Effect: skilld.EffectDeny, MinTrust: skilld.TrustOfficial}}}))
	w := must[*service.Withheld](t)(e.svc.Check(ctx, e.member.WorkspaceID, partner.Skill))
	if w == nil || w.Index != 0 {
		t.Fatalf("check after the new rule: %+v", w)
	}
	// Installing it again is asked again, and refused like a new install.
	_, err = e.svc.InstallSkill(ctx, e.member, service.InstallSkillParams{Item: "partner/partner-skill"})
	if wantCode(t, err, skilld.EFORBIDDEN); !strings.Contains(err.Error(), "rule 1") {
		t.Errorf("re-install under a deny rule: %v", err)
	}
	own := must[*service.SkillView](t)(e.svc.CreateSkill(ctx, e.member, service.CreateSkillParams{Files: map[string]string{"SKILL.md": skillMD("own", "d")}}))
	if w := must[*service.Withheld](t)(e.svc.Check(ctx, e.member.WorkspaceID, own.Skill)); w != nil {
		t.Errorf("a skill the workspace wrote is never withheld: %+v", w)
	}
	// Another workspace's policy is its own.
	if _, err := e.svc.InstallSkill(ctx, e.other, service.InstallSkillParams{Item: "acme/acme-skill"}); err != nil {
		t.Errorf("other workspace: %v", err)
	}
}

func TestDecide(t *testing.T) {
	deny, allow := skilld.EffectDeny, skilld.EffectAllow
	rule := func(effect, reg string, trust skilld.Trust) skilld.InstallRule {
		return skilld.InstallRule{Effect: effect, Registry: reg, MinTrust: trust}
	}
	for _, tt := range []struct {
		name     string
		rules    []skilld.InstallRule
		registry string
		trust    skilld.Trust
		denied   int // rule index, -1 when allowed
	}{
		{"no rules", nil, "acme", skilld.TrustCommunity, -1},
		{"own skill", []skilld.InstallRule{rule(deny, "", "")}, "", "", -1},
		{"deny all", []skilld.InstallRule{rule(deny, "", "")}, "acme", skilld.TrustOfficial, 0},
		{"deny registry, other", []skilld.InstallRule{rule(deny, "acme", "")}, "corp", skilld.TrustCommunity, -1},
		{"deny below verified, community", []skilld.InstallRule{rule(deny, "", skilld.TrustVerified)}, "x", skilld.TrustCommunity, 0},
		{"deny below verified, verified", []skilld.InstallRule{rule(deny, "", skilld.TrustVerified)}, "x", skilld.TrustVerified, -1},
		{"allowlist acme", []skilld.InstallRule{rule(allow, "acme", ""), rule(deny, "", "")}, "acme", skilld.TrustCommunity, -1},
		{"allowlist, other", []skilld.InstallRule{rule(allow, "acme", ""), rule(deny, "", "")}, "github", skilld.TrustCommunity, 1},
		{"allow official first", []skilld.InstallRule{rule(allow, "", skilld.TrustOfficial), rule(deny, "", "")}, "corp", skilld.TrustOfficial, -1},
		{"allow official, verified falls through", []skilld.InstallRule{rule(allow, "", skilld.TrustOfficial), rule(deny, "", "")}, "p", skilld.TrustVerified, 1},
	} {
		w := service.Decide(tt.rules, tt.registry, tt.trust, nil)
		got := -1
		if w != nil {
			got = w.Index
		}
		if got != tt.denied {
			t.Errorf("%s: denied by %d, want %d", tt.name, got, tt.denied)
		}
	}
}

// TestDecideOnFindings: max_severity and rules make a deny match packages
// with such a finding (and an allow those without), combined with the
// registry and min_trust matchers; the withheld rule names the worst
// finding that matched.
func TestDecideOnFindings(t *testing.T) {
	deny, allow := skilld.EffectDeny, skilld.EffectAllow
	high := []skilld.Finding{
		{Rule: "archive", Severity: skilld.SeverityMedium, File: "a.zip"},
		{Rule: "pipe-to-shell", Severity: skilld.SeverityHigh, File: "scripts/i.sh", Line: 3},
	}
	low := []skilld.Finding{{Rule: "network-no-declaration", Severity: skilld.SeverityLow, File: "scripts/f.sh", Line: 2}}
	communityHigh := skilld.InstallRule{Effect: deny, MinTrust: skilld.TrustVerified, MaxSeverity: skilld.SeverityHigh}
	for _, tt := range []struct {
		name     string
		rules    []skilld.InstallRule
		trust    skilld.Trust
		findings []skilld.Finding
		denied   int
		finding  string
	}{
		{"community with high", []skilld.InstallRule{communityHigh}, skilld.TrustCommunity, high, 0, "pipe-to-shell"},
		{"community with low", []skilld.InstallRule{communityHigh}, skilld.TrustCommunity, low, -1, ""},
		{"community clean", []skilld.InstallRule{communityHigh}, skilld.TrustCommunity, nil, -1, ""},
		{"verified with high", []skilld.InstallRule{communityHigh}, skilld.TrustVerified, high, -1, ""},
		{"at severity", []skilld.InstallRule{{Effect: deny, MaxSeverity: skilld.SeverityMedium}}, skilld.TrustOfficial, high, 0, "pipe-to-shell"},
		{"by rule id", []skilld.InstallRule{{Effect: deny, Rules: []string{"archive"}}}, skilld.TrustOfficial, high, 0, "archive"},
		{"by rule id, absent", []skilld.InstallRule{{Effect: deny, Rules: []string{"encoded-exec"}}}, skilld.TrustOfficial, high, -1, ""},
		{"allow clean, deny rest", []skilld.InstallRule{{Effect: allow, MaxSeverity: skilld.SeverityMedium}, {Effect: deny}}, skilld.TrustCommunity, low, -1, ""},
		{"allow clean, dirty falls through", []skilld.InstallRule{{Effect: allow, MaxSeverity: skilld.SeverityMedium}, {Effect: deny}}, skilld.TrustCommunity, high, 1, ""},
		{"other registry", []skilld.InstallRule{{Effect: deny, Registry: "corp", MaxSeverity: skilld.SeverityInfo}}, skilld.TrustCommunity, high, -1, ""},
	} {
		w := service.Decide(tt.rules, "acme", tt.trust, tt.findings)
		got, finding := -1, ""
		if w != nil {
			got = w.Index
			if w.Finding != nil {
				finding = w.Finding.Rule
			}
		}
		if got != tt.denied || finding != tt.finding {
			t.Errorf("%s: denied by %d (finding %q), want %d (%q)", tt.name, got, finding, tt.denied, tt.finding)
		}
	}
	w := service.Decide([]skilld.InstallRule{communityHigh}, "acme", skilld.TrustCommunity, high)
	if want := `install policy rule 1 (deny below trust "verified" with findings at or above high): high finding pipe-to-shell in scripts/i.sh:3`; w.String() != want {
		t.Errorf("withheld says %q, want %q", w.String(), want)
	}
	if service.NeedsFindings([]skilld.InstallRule{{Effect: deny}}, "acme") || !service.NeedsFindings([]skilld.InstallRule{communityHigh}, "acme") ||
		service.NeedsFindings([]skilld.InstallRule{communityHigh}, "") {
		t.Error("NeedsFindings")
	}
}

func testAgents(t *testing.T, open storetest.Opener) {
	e := newEnv(t, open, service.Config{}, nil)
	ctx := t.Context()
	must[*skilld.Registry](t)(e.svc.CreateRegistry(ctx, e.root, service.CreateRegistryParams{Name: "acme", Trust: skilld.TrustCommunity}))
	publish(t, e, "acme", "lint", "d")
	own := must[*service.SkillView](t)(e.svc.CreateSkill(ctx, e.member, service.CreateSkillParams{Files: map[string]string{"SKILL.md": skillMD("own", "d")}}))
	ag := must[*skilld.Agent](t)(e.svc.CreateAgent(ctx, e.member, service.AgentParams{
		Name: "reviewer", Config: skilld.AgentConfig{Instruction: "Review.", Model: "openai:gpt-4o-mini"},
		Skills: []service.AgentSkillRef{{Skill: own.Slug, Version: 1}, {Item: "acme/lint"}},
	}))
	if len(ag.Skills) != 2 || ag.Skills[0].SkillID != own.ID || ag.Skills[0].Version != 1 {
		t.Fatalf("agent %+v", ag)
	}
	installed := must[*service.SkillPage](t)(e.svc.ListSkills(ctx, e.viewer, service.ListSkillsParams{SourceType: skilld.SourceCatalog}))
	if installed.Total != 1 || installed.Items[0].ID != ag.Skills[1].SkillID {
		t.Errorf("attaching a catalog item installs it: %+v", installed)
	}
	theirs := must[*service.SkillView](t)(e.svc.CreateSkill(ctx, e.other, service.CreateSkillParams{Files: map[string]string{"SKILL.md": skillMD("theirs", "d")}}))
	_, err := e.svc.CreateAgent(ctx, e.member, service.AgentParams{Name: "thief", Skills: []service.AgentSkillRef{{Skill: theirs.ID}}})
	wantCode(t, err, skilld.ENOTFOUND)
	_, err = e.svc.CreateAgent(ctx, e.member, service.AgentParams{Name: "bad", Config: skilld.AgentConfig{Context: skilld.ContextSettings{Placement: "sideways"}}})
	wantCode(t, err, skilld.EINVALID)
	for _, env := range []map[string]string{{"1BAD": "x"}, {"A-B": "x"}, {"NUL": "a\x00b"}, {"BIG": strings.Repeat("x", service.MaxSandboxEnvValue+1)}} {
		_, err = e.svc.CreateAgent(ctx, e.member, service.AgentParams{Name: "bad-env", Config: skilld.AgentConfig{Sandbox: skilld.SandboxSettings{Env: env}}})
		var se *skilld.Error
		if !errors.As(err, &se) || se.Code != skilld.EINVALID || len(se.Details) == 0 || se.Details[0].Field != "config.sandbox.env" {
			t.Errorf("env %.20q: %v", env, err)
		}
	}
	withEnv := must[*skilld.Agent](t)(e.svc.CreateAgent(ctx, e.member, service.AgentParams{Name: "with-env",
		Config: skilld.AgentConfig{Sandbox: skilld.SandboxSettings{Network: skilld.NetworkSettings{Allow: []string{"api.example.com"}}, Env: map[string]string{"LOG_LEVEL": "debug"}}}}))
	if got := must[*skilld.Agent](t)(e.svc.GetAgent(ctx, e.viewer, service.GetAgentParams{AgentRef: service.AgentRef{ID: withEnv.ID}})); !got.Config.Sandbox.Network.Enabled || got.Config.Sandbox.Network.Allow[0] != "api.example.com" || got.Config.Sandbox.Env["LOG_LEVEL"] != "debug" {
		t.Errorf("sandbox settings not kept: %+v", got.Config.Sandbox)
	}
	e.svc.DeleteAgent(ctx, e.member, service.DeleteAgentParams{AgentRef: service.AgentRef{ID: withEnv.ID}})
	_, err = e.svc.CreateAgent(ctx, e.viewer, service.AgentParams{Name: "x"})
	wantCode(t, err, skilld.EFORBIDDEN)
	up := must[*skilld.Agent](t)(e.svc.UpdateAgent(ctx, e.member, service.UpdateAgentParams{AgentRef: service.AgentRef{ID: "reviewer"}, Skills: &[]service.AgentSkillRef{}}))
	if len(up.Skills) != 0 || up.Config.Instruction != "Review." {
		t.Errorf("updated %+v", up)
	}
	list := must[*service.AgentPage](t)(e.svc.ListAgents(ctx, e.viewer, service.ListAgentsParams{}))
	if list.Total != 1 {
		t.Errorf("agents %+v", list)
	}
	if err := e.svc.DeleteAgent(ctx, e.member, service.DeleteAgentParams{AgentRef: service.AgentRef{ID: ag.ID}}); err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.GetAgent(ctx, e.viewer, service.GetAgentParams{AgentRef: service.AgentRef{ID: ag.ID}})
	wantCode(t, err, skilld.ENOTFOUND)
}

func testPathImport(t *testing.T, open storetest.Opener) {
	root := t.TempDir()
	skill := filepath.Join(root, "allowed", "local-skill")
	if err := os.MkdirAll(skill, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(skill, "SKILL.md"), []byte(skillMD("local-skill", "From disk")), 0o644)
	outside := filepath.Join(root, "outside")
	os.MkdirAll(outside, 0o755)
	os.WriteFile(filepath.Join(outside, "SKILL.md"), []byte(skillMD("outside", "d")), 0o644)
	os.Symlink(outside, filepath.Join(root, "allowed", "sneaky"))

	off := newEnv(t, open, service.Config{}, nil)
	_, err := off.svc.ImportPath(t.Context(), off.admin, service.ImportPathParams{Path: skill})
	wantCode(t, err, skilld.EFORBIDDEN)

	e := newEnv(t, open, service.Config{PathImportRoots: []string{filepath.Join(root, "allowed")}}, nil)
	_, err = e.svc.ImportPath(t.Context(), e.member, service.ImportPathParams{Path: skill})
	wantCode(t, err, skilld.EFORBIDDEN)
	sk := must[*service.SkillView](t)(e.svc.ImportPath(t.Context(), e.admin, service.ImportPathParams{Path: skill}))
	if sk.SourceType != skilld.SourcePath || !strings.HasPrefix(sk.SourceURL, "file://") {
		t.Errorf("imported %+v", sk.Skill)
	}
	for _, p := range []string{outside, filepath.Join(root, "allowed", "sneaky"), "relative/path", filepath.Join(root, "allowed", "..", "outside")} {
		_, err := e.svc.ImportPath(t.Context(), e.admin, service.ImportPathParams{Path: p})
		if code := skilld.ErrorCode(err); code != skilld.EFORBIDDEN && code != skilld.EINVALID {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// testConcurrentInstall installs one item from 8 requests at once: all of
// them get the same skill, and exactly one of them created it.
func testConcurrentInstall(t *testing.T, open storetest.Opener) {
	e := newEnv(t, open, service.Config{}, nil)
	must[*skilld.Registry](t)(e.svc.CreateRegistry(t.Context(), e.root, service.CreateRegistryParams{Name: "acme", Trust: skilld.TrustVerified}))
	publish(t, e, "acme", "lint", "Lint")
	const n = 8
	views := make([]*service.SkillView, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			views[i], errs[i] = e.svc.InstallSkill(t.Context(), e.member, service.InstallSkillParams{Item: "acme/lint"})
		})
	}
	wg.Wait()
	created := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("install %d: %v", i, errs[i])
		}
		if views[i].ID != views[0].ID {
			t.Errorf("install %d returned skill %s, install 0 %s", i, views[i].ID, views[0].ID)
		}
		if !views[i].Existing {
			created++
		}
	}
	if created != 1 {
		t.Errorf("%d installs say they created the skill, want 1", created)
	}
	list := must[*service.SkillPage](t)(e.svc.ListSkills(t.Context(), e.member, service.ListSkillsParams{}))
	if list.Total != 1 {
		t.Errorf("%d skills after concurrent installs, want 1", list.Total)
	}
}
