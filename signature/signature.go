// Package signature verifies Sigstore bundles over skill package digests.
//
// A package's digest is the SHA-256 of its canonical manifest (see pack), so
// a signer signs the manifest bytes (`skilld pack` prints them) and the
// bundle's message digest must equal the package digest. Two modes:
//
//   - Sigstore: the bundle carries a short-lived certificate naming an OIDC
//     issuer and subject, checked against an operator-supplied trusted root
//     (public-good or private) and a transparency log entry, offline.
//   - Keyed: the bundle names no certificate and is checked against one
//     public key (PEM) the registry holds, for teams without an OIDC issuer.
package signature

import (
	"crypto"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
	sigsig "github.com/sigstore/sigstore/pkg/signature"

	"github.com/skilld/skilld"
)

// MaxBundleSize bounds a stored bundle; real ones are a few kilobytes.
const MaxBundleSize = 64 << 10

// ErrUnverified wraps every reason a well-formed request failed to verify,
// so callers can tell "the signature is bad" from "the input is malformed".
var ErrUnverified = errors.New("signature not verified")

// Signer is who a verified bundle says signed: an OIDC issuer and subject
// (Sigstore mode) or the SHA-256 of the public key (keyed mode).
type Signer struct {
	Issuer  string `json:"issuer,omitempty"`
	Subject string `json:"subject,omitempty"`
	KeyID   string `json:"key_id,omitempty"`
}

// Identity is the certificate identity a policy wants, as regular
// expressions over the OIDC issuer and the certificate subject (the SAN:
// an email or a workflow URI). Empty matches anything.
type Identity struct {
	Issuer  string `json:"issuer,omitempty"`
	Subject string `json:"subject,omitempty"`
}

// Verifier checks Sigstore-mode bundles against one trusted root.
type Verifier struct {
	v *verify.Verifier
}

// LoadTrustedRoot reads a trusted_root.json (the Sigstore TUF target, or a
// private deployment's) and returns a Verifier over it.
func LoadTrustedRoot(path string) (*Verifier, error) {
	tr, err := root.NewTrustedRootFromPath(path)
	if err != nil {
		return nil, skilld.Errorf(skilld.EINVALID, "sigstore trusted root %s: %v", path, err)
	}
	return NewVerifier(tr)
}

// NewVerifier verifies offline against trusted: a bundle must carry at
// least one transparency log entry and an observed time (the log's
// integrated time or a signed timestamp) inside the certificate's validity.
func NewVerifier(trusted root.TrustedMaterial) (*Verifier, error) {
	v, err := verify.NewVerifier(trusted, verify.WithTransparencyLog(1), verify.WithObserverTimestamps(1))
	if err != nil {
		return nil, fmt.Errorf("sigstore verifier: %w", err)
	}
	return &Verifier{v: v}, nil
}

// ParseBundle decodes a Sigstore bundle (protobuf JSON, any released
// version). EINVALID when it is not one.
func ParseBundle(b []byte) (*bundle.Bundle, error) {
	if len(b) == 0 {
		return nil, skilld.Errorf(skilld.EINVALID, "signature bundle is empty")
	}
	if len(b) > MaxBundleSize {
		return nil, skilld.Errorf(skilld.ETOOLARGE, "signature bundle is %d bytes, over %d", len(b), MaxBundleSize)
	}
	var bu bundle.Bundle
	if err := bu.UnmarshalJSON(b); err != nil {
		return nil, skilld.Errorf(skilld.EINVALID, "signature bundle: %v", err)
	}
	return &bu, nil
}

// Verify checks bundleJSON against the package digest ("sha256:<hex>") and
// the wanted identity.
func (v *Verifier) Verify(bundleJSON []byte, digest string, want Identity) (*Signer, error) {
	bu, err := ParseBundle(bundleJSON)
	if err != nil {
		return nil, err
	}
	return v.VerifyEntity(bu, digest, want)
}

// VerifyEntity is Verify over an already decoded bundle.
func (v *Verifier) VerifyEntity(e verify.SignedEntity, digest string, want Identity) (*Signer, error) {
	sum, err := digestBytes(digest)
	if err != nil {
		return nil, err
	}
	id, err := certificateIdentity(want)
	if err != nil {
		return nil, err
	}
	res, err := v.v.Verify(e, verify.NewPolicy(verify.WithArtifactDigest("sha256", sum), verify.WithCertificateIdentity(id)))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnverified, err)
	}
	if res.Signature == nil || res.Signature.Certificate == nil {
		return nil, fmt.Errorf("%w: bundle has no certificate", ErrUnverified)
	}
	c := res.Signature.Certificate
	return &Signer{Issuer: c.Issuer, Subject: c.SubjectAlternativeName}, nil
}

// VerifyKeyed checks bundleJSON against the package digest and one trusted
// public key (PEM, ECDSA or RSA: keys that sign a digest). No transparency
// log or timestamp is required: the key alone is the trust, so rotating it
// is the operator's revocation (docs/OPERATIONS.md).
func VerifyKeyed(bundleJSON []byte, digest string, publicKeyPEM string) (*Signer, error) {
	bu, err := ParseBundle(bundleJSON)
	if err != nil {
		return nil, err
	}
	return VerifyKeyedEntity(bu, digest, publicKeyPEM)
}

// VerifyKeyedEntity is VerifyKeyed over an already decoded bundle.
func VerifyKeyedEntity(e verify.SignedEntity, digest string, publicKeyPEM string) (*Signer, error) {
	sum, err := digestBytes(digest)
	if err != nil {
		return nil, err
	}
	pub, keyID, err := ParsePublicKey(publicKeyPEM)
	if err != nil {
		return nil, err
	}
	sv, err := sigsig.LoadVerifier(pub, crypto.SHA256)
	if err != nil {
		return nil, skilld.Errorf(skilld.EINVALID, "public key: %v", err)
	}
	// One key per registry: whatever key hint the bundle names, the
	// registry's key is the one that must have signed.
	key := root.NewExpiringKey(sv, time.Time{}, time.Time{})
	tm := root.NewTrustedPublicKeyMaterial(func(string) (root.TimeConstrainedVerifier, error) { return key, nil })
	v, err := verify.NewVerifier(tm, verify.WithNoObserverTimestamps())
	if err != nil {
		return nil, fmt.Errorf("keyed verifier: %w", err)
	}
	if _, err := v.Verify(e, verify.NewPolicy(verify.WithArtifactDigest("sha256", sum), verify.WithKey())); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnverified, err)
	}
	return &Signer{KeyID: keyID}, nil
}

// ParsePublicKey decodes one PEM public key and returns it with its key ID,
// "sha256:" and the hex SHA-256 of its DER (SubjectPublicKeyInfo) form.
func ParsePublicKey(publicKeyPEM string) (crypto.PublicKey, string, error) {
	blk, rest := pem.Decode([]byte(publicKeyPEM))
	if blk == nil {
		return nil, "", skilld.Errorf(skilld.EINVALID, "public key: no PEM block")
	}
	if strings.TrimSpace(string(rest)) != "" {
		return nil, "", skilld.Errorf(skilld.EINVALID, "public key: one PEM block expected, found more")
	}
	if blk.Type != "PUBLIC KEY" {
		return nil, "", skilld.Errorf(skilld.EINVALID, "public key: PEM block is %q, want \"PUBLIC KEY\"", blk.Type)
	}
	pub, err := x509.ParsePKIXPublicKey(blk.Bytes)
	if err != nil {
		return nil, "", skilld.Errorf(skilld.EINVALID, "public key: %v", err)
	}
	sum := sha256.Sum256(blk.Bytes)
	return pub, "sha256:" + hex.EncodeToString(sum[:]), nil
}

func digestBytes(digest string) ([]byte, error) {
	h, ok := strings.CutPrefix(digest, "sha256:")
	if !ok {
		return nil, skilld.Errorf(skilld.EINVALID, "digest %q: want sha256:<hex>", digest)
	}
	b, err := hex.DecodeString(h)
	if err != nil || len(b) != sha256.Size {
		return nil, skilld.Errorf(skilld.EINVALID, "digest %q: want sha256:<64 hex>", digest)
	}
	return b, nil
}

// CheckIdentity says whether want's expressions compile (EINVALID if not).
func CheckIdentity(want Identity) error {
	_, err := certificateIdentity(want)
	return err
}

func certificateIdentity(want Identity) (verify.CertificateIdentity, error) {
	issuer, subject := want.Issuer, want.Subject
	if issuer == "" {
		issuer = ".*"
	}
	if subject == "" {
		subject = ".*"
	}
	id, err := verify.NewShortCertificateIdentity("", issuer, "", subject)
	if err != nil {
		return verify.CertificateIdentity{}, skilld.Errorf(skilld.EINVALID, "signature identity: %v", err)
	}
	return id, nil
}

// Check verifies bundleJSON in the mode the bundle is in: a bundle with a
// certificate against v (any identity; a policy narrows it with Verify),
// one without against the registry's publicKeyPEM. It is what the API
// shows of a version's signature.
func Check(bundleJSON []byte, digest, publicKeyPEM string, v *Verifier) (*Signer, error) {
	bu, err := ParseBundle(bundleJSON)
	if err != nil {
		return nil, err
	}
	vc, err := bu.VerificationContent()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnverified, err)
	}
	if vc.Certificate() == nil {
		if publicKeyPEM == "" {
			return nil, fmt.Errorf("%w: keyed signature, and the registry has no public key", ErrUnverified)
		}
		return VerifyKeyedEntity(bu, digest, publicKeyPEM)
	}
	if v == nil {
		return nil, fmt.Errorf("%w: the server has no Sigstore trusted root (skilld serve --sigstore-trusted-root)", ErrUnverified)
	}
	return v.VerifyEntity(bu, digest, Identity{})
}
