package web_test

import (
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/signature/signaturetest"
)

// TestSignaturePages: the catalog item page and an installed skill's page
// say who signed the package and that it verifies; an unsigned item says
// it is not signed.
func TestSignaturePages(t *testing.T) {
	e := newEnv(t)
	e.fixture()
	key := signaturetest.NewKey(t)
	if _, err := e.svc.CreateRegistry(t.Context(), e.root, service.CreateRegistryParams{Name: "team", Trust: skilld.TrustVerified, PublicKey: key.PublicKeyPEM(t)}); err != nil {
		t.Fatal(err)
	}
	md := skillMD("signed", "Signed skill.", "Do it.\n")
	pub, err := e.svc.PublishCatalogItem(t.Context(), e.root, service.PublishCatalogItemParams{Registry: "team",
		Archive: zipOf(t, map[string]string{"SKILL.md": md}), Bundle: string(key.SignSkill(t, md))})
	if err != nil {
		t.Fatal(err)
	}
	keyID := pub.Signature.KeyID
	b := e.signedIn(e.viewerTok)
	ip := b.get("/ui/catalog/team/signed")
	if sig := element(t, ip, "signature"); !strings.Contains(sig, "verified") || !strings.Contains(sig, keyID[:len("sha256:")+12]) || strings.Contains(sig, "not verified") {
		t.Errorf("item page signature:\n%s", sig)
	}
	if sig := element(t, b.get("/ui/catalog/acme/lint"), "signature"); !strings.Contains(sig, "not signed") {
		t.Errorf("unsigned item page:\n%s", sig)
	}
	// The catalog's verdicts ask signature rules too.
	if _, err := e.svc.PutPolicy(t.Context(), e.admin, service.PutPolicyParams{InstallRules: []skilld.InstallRule{
		{Effect: skilld.EffectDeny, RequireSignature: &skilld.SignatureRequirement{Key: true}}}}); err != nil {
		t.Fatal(err)
	}
	cp := b.get("/ui/catalog")
	if li := catalogEntry(t, cp, "acme/lint"); !strings.Contains(li, "the package is not signed") {
		t.Errorf("unsigned catalog entry:\n%s", li)
	}
	if li := catalogEntry(t, cp, "team/signed"); !strings.Contains(li, "allowed by the install policy") {
		t.Errorf("signed catalog entry:\n%s", li)
	}
	in, err := e.svc.InstallSkill(t.Context(), e.member, service.InstallSkillParams{Item: "team/signed"})
	if err != nil {
		t.Fatal(err)
	}
	if sig := element(t, b.get("/ui/skills/"+in.ID), "signature"); !strings.Contains(sig, "verified") || strings.Contains(sig, "not verified") {
		t.Errorf("skill page signature:\n%s", sig)
	}
}

// A Sigstore-signed item shows its signer's identity, verified against
// the server's trusted root, on the item and skill pages; one signed by
// another Sigstore is shown as not verified, with the reason.
func TestSigstoreSignerPages(t *testing.T) {
	ss := signaturetest.NewSigstore(t)
	e := newEnvWith(t, service.Config{Sigstore: ss.Verifier(t)})
	if _, err := e.svc.CreateRegistry(t.Context(), e.root, service.CreateRegistryParams{Name: "team", Trust: skilld.TrustVerified}); err != nil {
		t.Fatal(err)
	}
	publish := func(name string, bundle []byte) {
		md := skillMD(name, "Signed skill.", "Do it.\n")
		if _, err := e.svc.PublishCatalogItem(t.Context(), e.root, service.PublishCatalogItemParams{Registry: "team",
			Archive: zipOf(t, map[string]string{"SKILL.md": md}), Bundle: string(bundle)}); err != nil {
			t.Fatal(err)
		}
	}
	publish("signed", ss.SignSkill(t, skillMD("signed", "Signed skill.", "Do it.\n"), "alice@example.com", "https://issuer.example.com"))
	publish("foreign", signaturetest.NewSigstore(t).SignSkill(t, skillMD("foreign", "Signed skill.", "Do it.\n"), "alice@example.com", "https://issuer.example.com"))
	b := e.signedIn(e.viewerTok)
	want := "signed by <code>alice@example.com</code> (issuer <code>https://issuer.example.com</code>)"
	if sig := element(t, b.get("/ui/catalog/team/signed"), "signature"); !strings.Contains(sig, want) || strings.Contains(sig, "not verified") {
		t.Errorf("item page signature:\n%s", sig)
	}
	if sig := element(t, b.get("/ui/catalog/team/foreign"), "signature"); !strings.Contains(sig, "not verified") {
		t.Errorf("foreign item page signature:\n%s", sig)
	}
	in, err := e.svc.InstallSkill(t.Context(), e.member, service.InstallSkillParams{Item: "team/signed"})
	if err != nil {
		t.Fatal(err)
	}
	if sig := element(t, b.get("/ui/skills/"+in.ID), "signature"); !strings.Contains(sig, want) {
		t.Errorf("skill page signature:\n%s", sig)
	}
}
