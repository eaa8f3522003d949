// Package signaturetest makes real Sigstore bundles for tests: keyed ones,
// and ones from a Sigstore of the test's own.
package signaturetest

import (
	"testing"

	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/sign"

	"github.com/skilld/skilld/pack"
)

// Key is a fresh ECDSA P-256 signing key.
type Key struct {
	kp *sign.EphemeralKeypair
}

// NewKey generates a key.
func NewKey(t testing.TB) *Key {
	t.Helper()
	kp, err := sign.NewEphemeralKeypair(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &Key{kp: kp}
}

// PublicKeyPEM is what a registry stores for keyed verification.
func (k *Key) PublicKeyPEM(t testing.TB) string {
	t.Helper()
	p, err := k.kp.GetPublicKeyPem()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Sign returns the JSON of a keyed Sigstore bundle (v0.3, message
// signature, no transparency log) over artifact, as `cosign sign-blob
// --key ... --tlog-upload=false --new-bundle-format` would make it.
func (k *Key) Sign(t testing.TB, artifact []byte) []byte {
	t.Helper()
	pb, err := sign.Bundle(&sign.PlainData{Data: artifact}, k.kp, sign.BundleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return marshal(t, pb)
}

// marshal is the JSON of bundle pb.
func marshal(t testing.TB, pb *protobundle.Bundle) []byte {
	t.Helper()
	b, err := bundle.NewBundle(pb)
	if err != nil {
		t.Fatal(err)
	}
	js, err := b.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// SignSkill signs the manifest of the package made of one SKILL.md with
// this text: the bundle a publisher of that skill would upload.
func (k *Key) SignSkill(t testing.TB, skillMD string) []byte {
	t.Helper()
	return k.Sign(t, manifestOf(t, skillMD))
}

// manifestOf is the manifest of the package made of one SKILL.md with
// this text: what its digest is the SHA-256 of, and a signature covers.
func manifestOf(t testing.TB, skillMD string) []byte {
	t.Helper()
	p, err := pack.New([]pack.File{{Path: "SKILL.md", Data: []byte(skillMD)}}, pack.InlineLimits())
	if err != nil {
		t.Fatal(err)
	}
	return p.Manifest()
}
