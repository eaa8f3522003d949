package signature_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"os"
	"testing"

	"github.com/skilld/skilld/signature"
	"github.com/skilld/skilld/signature/signaturetest"
)

// BenchmarkVerifyKeyed is what a keyed require_signature rule costs per
// skill at install and run start: parse the bundle and the key, verify.
func BenchmarkVerifyKeyed(b *testing.B) {
	manifest := []byte("100644 3 abc SKILL.md\n")
	key := signaturetest.NewKey(b)
	bundle, pem, digest := key.Sign(b, manifest), key.PublicKeyPEM(b), digestOf(manifest)
	for b.Loop() {
		if _, err := signature.VerifyKeyed(bundle, digest, pem); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyKeyedFloor is the same check done the simplest way: one
// ECDSA P-256 verification of a digest, nothing parsed.
func BenchmarkVerifyKeyedFloor(b *testing.B) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	sum := sha256.Sum256([]byte("100644 3 abc SKILL.md\n"))
	sig, err := ecdsa.SignASN1(rand.Reader, k, sum[:])
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if !ecdsa.VerifyASN1(&k.PublicKey, sum[:], sig) {
			b.Fatal("bad signature")
		}
	}
}

// BenchmarkVerifySigstore verifies a real Sigstore bundle (certificate
// chain, transparency log entry and its promise, identity) from its JSON.
func BenchmarkVerifySigstore(b *testing.B) {
	v, err := signature.LoadTrustedRoot("testdata/scaffolding-trusted-root.json")
	if err != nil {
		b.Fatal(err)
	}
	bundle, err := os.ReadFile("testdata/othername.sigstore.json")
	if err != nil {
		b.Fatal(err)
	}
	const digest = "sha256:bc103b4a84971ef6459b294a2b98568a2bfb72cded09d4acd1e16366a401f95b"
	for b.Loop() {
		if _, err := v.Verify(bundle, digest, signature.Identity{Subject: "^foo!oidc\\.local$"}); err != nil {
			b.Fatal(err)
		}
	}
}
