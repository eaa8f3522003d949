package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/signature"
	"github.com/skilld/skilld/store"
)

// errUnsigned is why a package without a bundle fails a signature rule.
var errUnsigned = errors.New("the package is not signed")

// signedPackage is what checking a package's signature needs: the bundle
// of the catalog version it came from, its registry's public key and the
// server's Sigstore verifier.
type signedPackage struct {
	digest    string
	bundle    []byte
	publicKey string
	sigstore  *signature.Verifier
}

// signedFunc loads a package's signedPackage when a rule needs it; a nil
// signedFunc means the package is not chosen yet.
type signedFunc func(ctx context.Context) (*signedPackage, error)

// check says why the package fails req, or nil when it meets it.
func (p *signedPackage) check(req *skilld.SignatureRequirement) error {
	if len(p.bundle) == 0 {
		return errUnsigned
	}
	if req.Key {
		if p.publicKey == "" {
			return fmt.Errorf("%w: the registry has no public key", signature.ErrUnverified)
		}
		_, err := signature.VerifyKeyed(p.bundle, p.digest, p.publicKey)
		return err
	}
	if p.sigstore == nil {
		return fmt.Errorf("%w: the server has no Sigstore trusted root (skilld serve --sigstore-trusted-root)", signature.ErrUnverified)
	}
	_, err := p.sigstore.Verify(p.bundle, p.digest, signature.Identity{Issuer: req.Issuer, Subject: req.Subject})
	return err
}

// status is what the API shows of the package's signature; nil when it
// has none.
func (p *signedPackage) status() *skilld.SignatureStatus {
	if len(p.bundle) == 0 {
		return nil
	}
	who, err := signature.Check(p.bundle, p.digest, p.publicKey, p.sigstore)
	if err != nil {
		return &skilld.SignatureStatus{Error: err.Error()}
	}
	return &skilld.SignatureStatus{Verified: true, Issuer: who.Issuer, Subject: who.Subject, KeyID: who.KeyID}
}

// unsigned is the signedFunc of a package no catalog version vouches for
// (written in the workspace, or imported from GitHub).
func unsigned(digest string) signedFunc {
	return func(context.Context) (*signedPackage, error) { return &signedPackage{digest: digest}, nil }
}

// catalogSigned is the signedFunc of package digest as a skill installed
// from version number of catalog item itemID holds it. The version's
// bundle is checked against digest, so a skill edited since no longer
// verifies.
func (s *Service) catalogSigned(itemID string, number int, digest string) signedFunc {
	if itemID == "" || number == 0 {
		return unsigned(digest)
	}
	return func(ctx context.Context) (*signedPackage, error) {
		v, err := s.db.CatalogItemVersionGet(ctx, &store.CatalogItemVersionGetParams{ItemID: itemID, Number: number})
		if err != nil {
			return nil, err
		}
		return s.signedVersion(ctx, itemID, v.Bundle, digest)
	}
}

// signedVersion completes a catalog version's bundle with its registry's
// key and the server's verifier.
func (s *Service) signedVersion(ctx context.Context, itemID string, bundle []byte, digest string) (*signedPackage, error) {
	p := &signedPackage{digest: digest, bundle: bundle, sigstore: s.cfg.Sigstore}
	if len(bundle) == 0 {
		return p, nil
	}
	item, err := s.db.CatalogItemGet(ctx, &store.CatalogItemGetParams{ID: itemID})
	if err != nil {
		return nil, err
	}
	reg, err := s.db.RegistryGet(ctx, &store.RegistryGetParams{ID: item.RegistryID})
	if err != nil {
		return nil, err
	}
	p.publicKey = reg.PublicKey
	return p, nil
}

// withSignature fills v.Signature, what verifying its bundle finds.
func (s *Service) withSignature(ctx context.Context, v *skilld.CatalogItemVersion) error {
	if len(v.Bundle) == 0 {
		return nil
	}
	p, err := s.signedVersion(ctx, v.ItemID, v.Bundle, v.Digest)
	if err != nil {
		return err
	}
	v.Signature = p.status()
	return nil
}

// checkRequirement validates rule i's require_signature.
func checkRequirement(i int, r skilld.InstallRule) error {
	req := r.RequireSignature
	if req == nil {
		return nil
	}
	field := fmt.Sprintf("install_rules[%d].require_signature", i)
	if req.Key && (req.Issuer != "" || req.Subject != "") {
		return invalidField(field, "require_signature takes key, or issuer and subject, not both")
	}
	if err := signature.CheckIdentity(signature.Identity{Issuer: req.Issuer, Subject: req.Subject}); err != nil {
		return invalidField(field, "%s", skilld.ErrorMessage(err))
	}
	return nil
}

// DecideCatalogItem is Decide for the latest version of a catalog item,
// whose scan is found, with its signature too: what installing it now
// would meet (the web UI's catalog verdicts).
func (s *Service) DecideCatalogItem(ctx context.Context, rules []skilld.InstallRule, item *skilld.CatalogItem, found *Findings) (*Withheld, error) {
	sp, err := neededSignature(ctx, rules, item.Registry, s.catalogSigned(item.ID, item.LatestVersion, found.Digest))
	if err != nil {
		return nil, err
	}
	return decision(rules, item.Registry, item.Trust, found.Findings, sp), nil
}
