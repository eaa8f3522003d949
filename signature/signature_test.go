package signature_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/sigstore/sigstore-go/pkg/testing/ca"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/signature"
	"github.com/skilld/skilld/signature/signaturetest"
)

func digestOf(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// A fake Sigstore (CA, transparency log, timestamp authority) signs a
// manifest; the verifier accepts it for its digest and identity and
// refuses another digest or another identity.
func TestVerifySigstore(t *testing.T) {
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	manifest := []byte("100644 5 2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824 SKILL.md\n")
	const subject, issuer = "alice@example.com", "https://issuer.example.com"
	entity, err := vs.Sign(subject, issuer, manifest)
	if err != nil {
		t.Fatal(err)
	}
	v, err := signature.NewVerifier(vs)
	if err != nil {
		t.Fatal(err)
	}

	got, err := v.VerifyEntity(entity, digestOf(manifest), signature.Identity{Issuer: "^https://issuer\\.example\\.com$", Subject: "@example\\.com$"})
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	if got.Issuer != issuer || got.Subject != subject || got.KeyID != "" {
		t.Fatalf("signer = %+v", got)
	}

	tampered := digestOf(append([]byte("100755"), manifest[6:]...))
	if _, err := v.VerifyEntity(entity, tampered, signature.Identity{}); !errors.Is(err, signature.ErrUnverified) {
		t.Fatalf("tampered digest: err = %v, want ErrUnverified", err)
	}
	if _, err := v.VerifyEntity(entity, digestOf(manifest), signature.Identity{Subject: "^bob@example\\.com$"}); !errors.Is(err, signature.ErrUnverified) {
		t.Fatalf("wrong subject: err = %v, want ErrUnverified", err)
	}
	if _, err := v.VerifyEntity(entity, digestOf(manifest), signature.Identity{Issuer: "accounts\\.google\\.com"}); !errors.Is(err, signature.ErrUnverified) {
		t.Fatalf("wrong issuer: err = %v, want ErrUnverified", err)
	}

	// A bundle from another Sigstore (another CA) is refused by this root.
	other, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := other.Sign(subject, issuer, manifest)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.VerifyEntity(foreign, digestOf(manifest), signature.Identity{}); !errors.Is(err, signature.ErrUnverified) {
		t.Fatalf("foreign root: err = %v, want ErrUnverified", err)
	}

	if _, err := v.VerifyEntity(entity, "sha1:abc", signature.Identity{}); skilld.ErrorCode(err) != skilld.EINVALID {
		t.Fatalf("bad digest: err = %v, want EINVALID", err)
	}
	if _, err := v.VerifyEntity(entity, digestOf(manifest), signature.Identity{Subject: "("}); skilld.ErrorCode(err) != skilld.EINVALID {
		t.Fatalf("bad regexp: err = %v, want EINVALID", err)
	}
}

// A keyed bundle made with a generated key verifies against that key's
// PEM and no other, and only for the digest it signed.
func TestVerifyKeyed(t *testing.T) {
	manifest := []byte("100644 3 abc SKILL.md\n")
	key := signaturetest.NewKey(t)
	bundle := key.Sign(t, manifest)

	got, err := signature.VerifyKeyed(bundle, digestOf(manifest), key.PublicKeyPEM(t))
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	_, wantID, err := signature.ParsePublicKey(key.PublicKeyPEM(t))
	if err != nil {
		t.Fatal(err)
	}
	if got.KeyID != wantID || got.Issuer != "" || got.Subject != "" {
		t.Fatalf("signer = %+v, want key %s", got, wantID)
	}

	if _, err := signature.VerifyKeyed(bundle, digestOf([]byte("other")), key.PublicKeyPEM(t)); !errors.Is(err, signature.ErrUnverified) {
		t.Fatalf("tampered digest: err = %v, want ErrUnverified", err)
	}
	other := signaturetest.NewKey(t)
	if _, err := signature.VerifyKeyed(bundle, digestOf(manifest), other.PublicKeyPEM(t)); !errors.Is(err, signature.ErrUnverified) {
		t.Fatalf("other key: err = %v, want ErrUnverified", err)
	}

	for name, in := range map[string]string{
		"empty":     "",
		"not pem":   "hello",
		"private":   "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
		"two":       key.PublicKeyPEM(t) + key.PublicKeyPEM(t),
		"truncated": "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n",
	} {
		if _, _, err := signature.ParsePublicKey(in); skilld.ErrorCode(err) != skilld.EINVALID {
			t.Errorf("%s key: err = %v, want EINVALID", name, err)
		}
	}
	for name, in := range map[string][]byte{"empty": nil, "not json": []byte("{"), "no content": []byte(`{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json"}`)} {
		if _, err := signature.ParseBundle(in); skilld.ErrorCode(err) != skilld.EINVALID {
			t.Errorf("%s bundle: err = %v, want EINVALID", name, err)
		}
	}
}

func FuzzParseBundle(f *testing.F) {
	f.Add([]byte(`{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json"}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		bu, err := signature.ParseBundle(b)
		if err == nil && bu == nil {
			t.Fatal("nil bundle without error")
		}
		if err != nil && skilld.ErrorCode(err) != skilld.EINVALID && skilld.ErrorCode(err) != skilld.ETOOLARGE {
			t.Fatalf("untyped error %v", err)
		}
	})
}

func FuzzParsePublicKey(f *testing.F) {
	f.Add("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n")
	f.Fuzz(func(t *testing.T, s string) {
		if _, _, err := signature.ParsePublicKey(s); err != nil && skilld.ErrorCode(err) != skilld.EINVALID {
			t.Fatalf("untyped error %v", err)
		}
	})
}

// A real bundle from its JSON, against a trusted root file: the path
// `skilld serve --sigstore-trusted-root` and a stored bundle take.
func TestVerifyBundleFile(t *testing.T) {
	v, err := signature.LoadTrustedRoot("testdata/scaffolding-trusted-root.json")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("testdata/othername.sigstore.json")
	if err != nil {
		t.Fatal(err)
	}
	const digest = "sha256:bc103b4a84971ef6459b294a2b98568a2bfb72cded09d4acd1e16366a401f95b"
	got, err := v.Verify(b, digest, signature.Identity{Issuer: "^http://oidc\\.local:8080$", Subject: "^foo!oidc\\.local$"})
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	if got.Issuer != "http://oidc.local:8080" || got.Subject != "foo!oidc.local" {
		t.Fatalf("signer = %+v", got)
	}
	if who, err := signature.Check(b, digest, "", v); err != nil || *who != *got {
		t.Errorf("check: %+v, %v", who, err)
	}
	if _, err := v.Verify(b, "sha256:"+strings.Repeat("0", 64), signature.Identity{}); !errors.Is(err, signature.ErrUnverified) {
		t.Errorf("tampered digest: err = %v, want ErrUnverified", err)
	}
	if _, err := v.Verify(b, digest, signature.Identity{Subject: "^foo@oidc\\.local$"}); !errors.Is(err, signature.ErrUnverified) {
		t.Errorf("wrong subject: err = %v, want ErrUnverified", err)
	}
	if _, err := signature.Check(b, digest, "", nil); !errors.Is(err, signature.ErrUnverified) {
		t.Errorf("no trusted root: err = %v, want ErrUnverified", err)
	}
	if _, err := signature.LoadTrustedRoot("testdata/othername.sigstore.json"); skilld.ErrorCode(err) != skilld.EINVALID {
		t.Errorf("a bundle as trusted root: err = %v, want EINVALID", err)
	}
}
