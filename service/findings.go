package service

import (
	"context"

	"github.com/skilld/skilld"
)

// Findings is what the package scanner found in one version of a skill
// or catalog item, under the rules version it names.
type Findings struct {
	Digest       string           `json:"digest"`
	RulesVersion int              `json:"rules_version"`
	Findings     []skilld.Finding `json:"findings"`
}

type SkillFindingsParams struct {
	SkillRef
	Version int `json:"version,omitempty" query:"version" jsonschema:"version number; the current version when omitted"`
}

// SkillFindings returns what the scanner found in a version of a skill
// (viewers and up).
func (s *Service) SkillFindings(ctx context.Context, a Actor, p SkillFindingsParams) (*Findings, error) {
	if err := a.can(skilld.RoleViewer); err != nil {
		return nil, err
	}
	sk, err := s.skill(ctx, a, p.ID)
	if err != nil {
		return nil, err
	}
	digest, _, err := s.versionDigest(ctx, sk, p.Version)
	if err != nil {
		return nil, err
	}
	return s.findings(ctx, digest)
}

type CatalogItemFindingsParams struct {
	Registry string `json:"registry" path:"r" jsonschema:"the item's registry"`
	Item     string `json:"id" path:"id" jsonschema:"the item's name (or ID)"`
	Version  int    `json:"version,omitempty" query:"version" jsonschema:"item version; the latest when omitted"`
}

// CatalogItemFindings returns what the scanner found in a version of a
// catalog item (any authenticated caller: the catalog is visible to every
// workspace, and its findings are what one reads before installing).
func (s *Service) CatalogItemFindings(ctx context.Context, a Actor, p CatalogItemFindingsParams) (*Findings, error) {
	v, err := s.registryItemVersion(ctx, a, p.Registry, p.Item, p.Version)
	if err != nil {
		return nil, err
	}
	return s.findings(ctx, v.Digest)
}

// registryItemVersion is version number (0: the latest) of registry's
// item ref (its name, else its ID when it is the registry's), for any
// authenticated caller: the catalog is visible to every workspace.
func (s *Service) registryItemVersion(ctx context.Context, a Actor, registry, ref string, number int) (*skilld.CatalogItemVersion, error) {
	if err := a.can(skilld.RoleViewer); err != nil {
		return nil, err
	}
	item, err := s.catalogItem(ctx, registry+"/"+ref)
	if skilld.ErrorCode(err) == skilld.ENOTFOUND {
		if byID, ierr := s.catalogItem(ctx, ref); ierr == nil && byID.Registry == registry {
			item, err = byID, nil
		}
	}
	if err != nil {
		return nil, err
	}
	return s.itemVersion(ctx, item, number)
}

// findings is the scan of a package as the API shows it.
func (s *Service) findings(ctx context.Context, digest string) (*Findings, error) {
	sc, err := s.packages.Scan(ctx, digest)
	if err != nil {
		return nil, err
	}
	out := &Findings{Digest: digest, RulesVersion: sc.RulesVersion, Findings: sc.Findings}
	if out.Findings == nil {
		out.Findings = []skilld.Finding{}
	}
	return out, nil
}
