package signaturetest

import (
	"encoding/base64"
	"encoding/hex"
	"testing"

	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protorekor "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore-go/pkg/tlog"
	"google.golang.org/protobuf/proto"

	"github.com/skilld/skilld/signature"
)

// Sigstore is a Sigstore of the test's own: a certificate authority that
// certifies any OIDC identity, a transparency log and a timestamp
// authority, with the trusted root that verifies what they sign.
type Sigstore struct {
	vs *ca.VirtualSigstore
}

// NewSigstore makes one.
func NewSigstore(t testing.TB) *Sigstore {
	t.Helper()
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	return &Sigstore{vs: vs}
}

// Verifier verifies against this Sigstore's trusted root, as `skilld serve
// --sigstore-trusted-root` does against the file it names.
func (s *Sigstore) Verifier(t testing.TB) *signature.Verifier {
	t.Helper()
	v, err := signature.NewVerifier(s.vs)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Sign returns the JSON of the bundle `cosign sign-blob` would make for
// subject (an email or a workflow URI) signed in at issuer: a short-lived
// certificate for that identity, the signature over artifact, its
// transparency log entry (with the log's promise of inclusion) and a
// signed timestamp.
func (s *Sigstore) Sign(t testing.TB, artifact []byte, subject, issuer string) []byte {
	t.Helper()
	e, err := s.vs.Sign(subject, issuer, artifact)
	if err != nil {
		t.Fatal(err)
	}
	vc, err := e.VerificationContent()
	if err != nil {
		t.Fatal(err)
	}
	sc, err := e.SignatureContent()
	if err != nil {
		t.Fatal(err)
	}
	entries, err := e.TlogEntries()
	if err != nil {
		t.Fatal(err)
	}
	stamps, err := e.Timestamps()
	if err != nil {
		t.Fatal(err)
	}
	msg := sc.MessageSignatureContent()
	vm := &protobundle.VerificationMaterial{
		// Bundle v0.1 carries the log's promise of inclusion (what the
		// test log gives), not a proof, and the certificate as a chain.
		Content: &protobundle.VerificationMaterial_X509CertificateChain{X509CertificateChain: &protocommon.X509CertificateChain{
			Certificates: []*protocommon.X509Certificate{{RawBytes: vc.(*bundle.Certificate).Certificate().Raw}},
		}},
		TimestampVerificationData: &protobundle.TimestampVerificationData{},
	}
	for _, en := range entries {
		// The test log's entry leaves out its kind and its promise of
		// inclusion (the log's signature over the entry), which a bundle
		// carries: the promise is signed again with the log's key.
		tle := proto.Clone(en.TransparencyLogEntry()).(*protorekor.TransparencyLogEntry)
		tle.KindVersion = &protorekor.KindVersion{Kind: "hashedrekord", Version: "0.0.1"}
		set, err := s.vs.RekorSignPayload(tlog.RekorPayload{Body: base64.StdEncoding.EncodeToString(tle.CanonicalizedBody),
			IntegratedTime: tle.IntegratedTime, LogIndex: tle.LogIndex, LogID: hex.EncodeToString(tle.LogId.KeyId)})
		if err != nil {
			t.Fatal(err)
		}
		tle.InclusionPromise = &protorekor.InclusionPromise{SignedEntryTimestamp: set}
		vm.TlogEntries = append(vm.TlogEntries, tle)
	}
	for _, ts := range stamps {
		vm.TimestampVerificationData.Rfc3161Timestamps = append(vm.TimestampVerificationData.Rfc3161Timestamps, &protocommon.RFC3161SignedTimestamp{SignedTimestamp: ts})
	}
	pb := &protobundle.Bundle{
		MediaType:            "application/vnd.dev.sigstore.bundle+json;version=0.1",
		VerificationMaterial: vm,
		Content: &protobundle.Bundle_MessageSignature{MessageSignature: &protocommon.MessageSignature{
			MessageDigest: &protocommon.HashOutput{Algorithm: protocommon.HashAlgorithm_SHA2_256, Digest: msg.Digest()},
			Signature:     msg.Signature(),
		}},
	}
	return marshal(t, pb)
}

// SignSkill signs, as subject at issuer, the manifest of the package made
// of one SKILL.md with this text.
func (s *Sigstore) SignSkill(t testing.TB, skillMD, subject, issuer string) []byte {
	t.Helper()
	return s.Sign(t, manifestOf(t, skillMD), subject, issuer)
}
