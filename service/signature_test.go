package service_test

import (
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/signature/signaturetest"
	"github.com/skilld/skilld/store/storetest"
)

func TestSignatures(t *testing.T) {
	forDrivers(t, func(t *testing.T, open storetest.Opener) { testKeyedSignatures(t, open) })
}

func TestSigstoreSignatures(t *testing.T) {
	forDrivers(t, func(t *testing.T, open storetest.Opener) { testSigstoreSignatures(t, open) })
}

// A Sigstore of the test's own signs packages for identities; against its
// trusted root the server shows each signer, and a rule requiring an
// identity admits the package signed by it and refuses one signed by
// another identity, one signed for other bytes and an unsigned one, at
// install and at run start.
func testSigstoreSignatures(t *testing.T, open storetest.Opener) {
	ss := signaturetest.NewSigstore(t)
	e := newEnv(t, open, service.Config{Sigstore: ss.Verifier(t)}, nil)
	ctx := t.Context()
	const issuer = "https://issuer.example.com"
	must[*skilld.Registry](t)(e.svc.CreateRegistry(ctx, e.root, service.CreateRegistryParams{Name: "team", Trust: skilld.TrustVerified}))
	good := publishSigned(t, e, "team", "lint", "Lint", ss.SignSkill(t, skillMD("lint", "Lint"), "alice@example.com", issuer))
	if s := good.Signature; s == nil || !s.Verified || s.Subject != "alice@example.com" || s.Issuer != issuer || s.KeyID != "" {
		t.Fatalf("published signature %+v", good.Signature)
	}
	stranger := publishSigned(t, e, "team", "fmt", "Format", ss.SignSkill(t, skillMD("fmt", "Format"), "mallory@evil.example", issuer))
	if s := stranger.Signature; s == nil || !s.Verified || s.Subject != "mallory@evil.example" {
		t.Fatalf("a stranger's signature %+v", stranger.Signature)
	}
	tampered := publishSigned(t, e, "team", "vet", "Vet", ss.SignSkill(t, skillMD("vet", "Another text"), "alice@example.com", issuer))
	if s := tampered.Signature; s == nil || s.Verified || s.Error == "" {
		t.Fatalf("a signature over other bytes %+v", tampered.Signature)
	}
	// Signed by another Sigstore: not verified against this root.
	foreign := publishSigned(t, e, "team", "doc", "Doc", signaturetest.NewSigstore(t).SignSkill(t, skillMD("doc", "Doc"), "alice@example.com", issuer))
	if s := foreign.Signature; s == nil || s.Verified {
		t.Fatalf("a foreign Sigstore's signature %+v", foreign.Signature)
	}
	publish(t, e, "team", "plain", "Plain")

	must[*skilld.Policy](t)(e.svc.PutPolicy(ctx, e.admin, service.PutPolicyParams{InstallRules: []skilld.InstallRule{
		{Effect: skilld.EffectDeny, Registry: "team", RequireSignature: &skilld.SignatureRequirement{Issuer: "^https://issuer\\.example\\.com$", Subject: "@example\\.com$"}},
	}}))
	in := must[*service.SkillView](t)(e.svc.InstallSkill(ctx, e.member, service.InstallSkillParams{Item: "team/lint"}))
	for _, item := range []string{"fmt", "vet", "doc", "plain"} {
		_, err := e.svc.InstallSkill(ctx, e.member, service.InstallSkillParams{Item: "team/" + item})
		if wantCode(t, err, skilld.EFORBIDDEN); err == nil || !strings.Contains(err.Error(), "rule 1") {
			t.Errorf("install of %s: %v", item, err)
		}
	}
	ag := must[*skilld.Agent](t)(e.svc.CreateAgent(ctx, e.member, service.AgentParams{
		Name: "a", Config: skilld.AgentConfig{Instruction: "Work.", Model: "openai:gpt-4o-mini"},
		Skills: []service.AgentSkillRef{{Skill: in.ID}},
	}))
	if snap := must[*service.Snapshot](t)(e.svc.Resolve(ctx, e.member.WorkspaceID, ag)); len(snap.Skills) != 1 || snap.Skills[0].Withheld != "" {
		t.Fatalf("run start: %+v", snap.Skills)
	}
	// Requiring someone else withholds it at the next run start.
	must[*skilld.Policy](t)(e.svc.PutPolicy(ctx, e.admin, service.PutPolicyParams{InstallRules: []skilld.InstallRule{
		{Effect: skilld.EffectDeny, Registry: "team", RequireSignature: &skilld.SignatureRequirement{Subject: "^bob@example\\.com$"}},
	}}))
	if snap := must[*service.Snapshot](t)(e.svc.Resolve(ctx, e.member.WorkspaceID, ag)); len(snap.Skills) != 1 || !strings.Contains(snap.Skills[0].Withheld, "install policy rule 1") {
		t.Errorf("run start under another identity's rule: %+v", snap.Skills)
	}
}

func publishSigned(t *testing.T, e *env, registry, name, desc string, bundle []byte) *service.PublishedItem {
	t.Helper()
	return must[*service.PublishedItem](t)(e.svc.PublishCatalogItem(t.Context(), e.root, service.PublishCatalogItemParams{
		Registry: registry, Archive: zipOf(t, map[string]string{name + "/SKILL.md": skillMD(name, desc)}), Bundle: string(bundle),
	}))
}

// A registry's key verifies what it signed; a rule requiring the key
// signature admits that and refuses (install) or withholds (run) an
// unsigned version, one signed for other bytes, and everything once the
// key is rotated, naming the rule and the reason.
func testKeyedSignatures(t *testing.T, open storetest.Opener) {
	e := newEnv(t, open, service.Config{}, nil)
	ctx := t.Context()
	key := signaturetest.NewKey(t)
	_, err := e.svc.CreateRegistry(ctx, e.root, service.CreateRegistryParams{Name: "team", Trust: skilld.TrustVerified, PublicKey: "not a key"})
	wantCode(t, err, skilld.EINVALID)
	must[*skilld.Registry](t)(e.svc.CreateRegistry(ctx, e.root, service.CreateRegistryParams{Name: "team", Trust: skilld.TrustVerified, PublicKey: key.PublicKeyPEM(t)}))
	_, err = e.svc.PublishCatalogItem(ctx, e.root, service.PublishCatalogItemParams{Registry: "team", Archive: zipOf(t, map[string]string{"x/SKILL.md": skillMD("x", "d")}), Bundle: "{"})
	wantCode(t, err, skilld.EINVALID)

	signed := publishSigned(t, e, "team", "lint", "Lint", key.SignSkill(t, skillMD("lint", "Lint")))
	if s := signed.Signature; s == nil || !s.Verified || !strings.HasPrefix(s.KeyID, "sha256:") {
		t.Fatalf("published signature %+v", signed.Signature)
	}
	v := must[*skilld.CatalogItemVersion](t)(e.svc.CatalogItemVersion(ctx, e.viewer, service.CatalogItemVersionParams{Registry: "team", Item: "lint"}))
	if v.Signature == nil || !v.Signature.Verified || v.Signature.KeyID != signed.Signature.KeyID {
		t.Fatalf("version signature %+v", v.Signature)
	}
	// Signed for other bytes: stored, shown as failing.
	wrong := publishSigned(t, e, "team", "fmt", "Format", key.SignSkill(t, skillMD("fmt", "Another text")))
	if s := wrong.Signature; s == nil || s.Verified || s.Error == "" {
		t.Fatalf("mismatched signature %+v", wrong.Signature)
	}
	publish(t, e, "team", "plain", "Plain")

	_, err = e.svc.PutPolicy(ctx, e.admin, service.PutPolicyParams{InstallRules: []skilld.InstallRule{{Effect: skilld.EffectDeny, RequireSignature: &skilld.SignatureRequirement{Key: true, Issuer: "x"}}}})
	wantCode(t, err, skilld.EINVALID)
	_, err = e.svc.PutPolicy(ctx, e.admin, service.PutPolicyParams{InstallRules: []skilld.InstallRule{{Effect: skilld.EffectDeny, RequireSignature: &skilld.SignatureRequirement{Subject: "("}}}})
	wantCode(t, err, skilld.EINVALID)
	must[*skilld.Policy](t)(e.svc.PutPolicy(ctx, e.admin, service.PutPolicyParams{InstallRules: []skilld.InstallRule{
		{Effect: skilld.EffectDeny, Registry: "team", RequireSignature: &skilld.SignatureRequirement{Key: true}},
	}}))
	in := must[*service.SkillView](t)(e.svc.InstallSkill(ctx, e.member, service.InstallSkillParams{Item: "team/lint"}))
	if w := must[*service.Withheld](t)(e.svc.Check(ctx, e.member.WorkspaceID, in.Skill)); w != nil {
		t.Errorf("signed skill withheld: %s", w)
	}
	_, err = e.svc.InstallSkill(ctx, e.member, service.InstallSkillParams{Item: "team/plain"})
	if wantCode(t, err, skilld.EFORBIDDEN); !strings.Contains(err.Error(), "rule 1") || !strings.Contains(err.Error(), "not signed") {
		t.Errorf("unsigned install: %v", err)
	}
	_, err = e.svc.InstallSkill(ctx, e.member, service.InstallSkillParams{Item: "team/fmt"})
	if wantCode(t, err, skilld.EFORBIDDEN); !strings.Contains(err.Error(), "signature not verified") {
		t.Errorf("mismatched install: %v", err)
	}

	ag := must[*skilld.Agent](t)(e.svc.CreateAgent(ctx, e.member, service.AgentParams{
		Name: "a", Config: skilld.AgentConfig{Instruction: "Work.", Model: "openai:gpt-4o-mini"},
		Skills: []service.AgentSkillRef{{Skill: in.ID}},
	}))
	if snap := must[*service.Snapshot](t)(e.svc.Resolve(ctx, e.member.WorkspaceID, ag)); len(snap.Skills) != 1 || snap.Skills[0].Withheld != "" {
		t.Fatalf("run start before rotation: %+v", snap.Skills)
	}
	// Rotating the key withholds what the old one signed at run start.
	other := signaturetest.NewKey(t)
	_, err = e.svc.SetRegistryKey(ctx, e.admin, service.SetRegistryKeyParams{Registry: "team", PublicKey: other.PublicKeyPEM(t)})
	wantCode(t, err, skilld.EFORBIDDEN)
	must[*skilld.Registry](t)(e.svc.SetRegistryKey(ctx, e.root, service.SetRegistryKeyParams{Registry: "team", PublicKey: other.PublicKeyPEM(t)}))
	w := must[*service.Withheld](t)(e.svc.Check(ctx, e.member.WorkspaceID, in.Skill))
	if w == nil || w.Index != 0 || !strings.Contains(w.Signature, "signature not verified") || !strings.Contains(w.String(), "require_signature by the registry key") {
		t.Fatalf("after rotation: %v", w)
	}
	if snap := must[*service.Snapshot](t)(e.svc.Resolve(ctx, e.member.WorkspaceID, ag)); len(snap.Skills) != 1 ||
		!strings.Contains(snap.Skills[0].Withheld, "install policy rule 1 (deny registry \"team\" require_signature by the registry key): signature not verified") {
		t.Errorf("run start after rotation: %+v", snap.Skills)
	}
	// An allow rule requiring the signature admits only signed skills.
	must[*skilld.Policy](t)(e.svc.PutPolicy(ctx, e.admin, service.PutPolicyParams{InstallRules: []skilld.InstallRule{
		{Effect: skilld.EffectAllow, Registry: "team", RequireSignature: &skilld.SignatureRequirement{Key: true}},
		{Effect: skilld.EffectDeny},
	}}))
	if w := must[*service.Withheld](t)(e.svc.Check(ctx, e.member.WorkspaceID, in.Skill)); w == nil || w.Index != 1 {
		t.Errorf("allow-if-signed after rotation: %v", w)
	}
	must[*skilld.Registry](t)(e.svc.SetRegistryKey(ctx, e.root, service.SetRegistryKeyParams{Registry: "team", PublicKey: key.PublicKeyPEM(t)}))
	if w := must[*service.Withheld](t)(e.svc.Check(ctx, e.member.WorkspaceID, in.Skill)); w != nil {
		t.Errorf("allow-if-signed with the key back: %v", w)
	}
	// A Sigstore-mode rule on a keyed bundle: no trusted root configured.
	must[*skilld.Policy](t)(e.svc.PutPolicy(ctx, e.admin, service.PutPolicyParams{InstallRules: []skilld.InstallRule{
		{Effect: skilld.EffectDeny, RequireSignature: &skilld.SignatureRequirement{Issuer: "^https://token\\.actions\\.githubusercontent\\.com$"}},
	}}))
	if w := must[*service.Withheld](t)(e.svc.Check(ctx, e.member.WorkspaceID, in.Skill)); w == nil || !strings.Contains(w.Signature, "trusted root") {
		t.Errorf("sigstore rule without a trusted root: %v", w)
	}
}
