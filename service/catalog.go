package service

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"sync"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/permissions"
	"github.com/skilld/skilld/signature"
	"github.com/skilld/skilld/store"
)

// registryName is the shape of registry names; "github" is reserved for
// GitHub imports.
// registryName is compiled on first use: a counted repetition compiles to a
// large program, which every command would otherwise build at start.
var registryName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`) })

// GitHubRegistry and GitHubTrust are what install policy sees for skills
// imported from GitHub.
const (
	GitHubRegistry = "github"
	GitHubTrust    = skilld.TrustCommunity
)

type CreateRegistryParams struct {
	Name      string       `json:"name" jsonschema:"lowercase name of the registry"`
	Trust     skilld.Trust `json:"trust" jsonschema:"official, verified or community"`
	PublicKey string       `json:"public_key,omitempty" jsonschema:"PEM public key that keyed signatures on the registry's items verify against"`
}

// CreateRegistry adds a catalog registry (instance admins only).
func (s *Service) CreateRegistry(ctx context.Context, a Actor, p CreateRegistryParams) (*skilld.Registry, error) {
	if err := a.requireInstanceAdmin(); err != nil {
		return nil, err
	}
	if !registryName().MatchString(p.Name) || p.Name == GitHubRegistry {
		return nil, invalidField("name", "registry name %q must be 1 to 63 lowercase letters, digits, '.', '_' or '-', and not %q", p.Name, GitHubRegistry)
	}
	if !p.Trust.Valid() {
		return nil, invalidField("trust", "trust must be official, verified or community, not %q", p.Trust)
	}
	if p.PublicKey != "" {
		if _, _, err := signature.ParsePublicKey(p.PublicKey); err != nil {
			return nil, invalidField("public_key", "%s", skilld.ErrorMessage(err))
		}
	}
	return s.db.RegistryCreate(ctx, &store.RegistryCreateParams{Name: p.Name, Trust: p.Trust, PublicKey: p.PublicKey})
}

type SetRegistryKeyParams struct {
	Registry  string `json:"registry" path:"r" jsonschema:"the registry"`
	PublicKey string `json:"public_key" jsonschema:"the new PEM public key; empty removes it"`
}

// SetRegistryKey replaces a registry's public key (instance admins only):
// how a key is rotated, or revoked with an empty one. Signatures made
// with the old key stop verifying at once, at install and at run start.
func (s *Service) SetRegistryKey(ctx context.Context, a Actor, p SetRegistryKeyParams) (*skilld.Registry, error) {
	if err := a.requireInstanceAdmin(); err != nil {
		return nil, err
	}
	if p.PublicKey != "" {
		if _, _, err := signature.ParsePublicKey(p.PublicKey); err != nil {
			return nil, invalidField("public_key", "%s", skilld.ErrorMessage(err))
		}
	}
	reg, err := s.db.RegistryGet(ctx, &store.RegistryGetParams{Name: p.Registry})
	if err != nil {
		return nil, err
	}
	return s.db.RegistrySetPublicKey(ctx, &store.RegistrySetPublicKeyParams{ID: reg.ID, PublicKey: p.PublicKey})
}

type ListRegistriesParams struct{ Page }

type RegistryList struct {
	Items []*skilld.Registry `json:"items"`
}

// ListRegistries lists the catalog's registries (any authenticated caller).
func (s *Service) ListRegistries(ctx context.Context, a Actor, p ListRegistriesParams) (*RegistryList, error) {
	if err := a.can(skilld.RoleViewer); err != nil {
		return nil, err
	}
	pg, _, err := p.normalize()
	if err != nil {
		return nil, err
	}
	rs, err := s.db.RegistryList(ctx, &store.RegistryListParams{Page: pg})
	if rs == nil {
		rs = []*skilld.Registry{}
	}
	return &RegistryList{Items: rs}, err
}

type PublishCatalogItemParams struct {
	Registry string `json:"registry" path:"r" jsonschema:"registry to publish into"`
	Archive  []byte `json:"archive" jsonschema:"zip, tar or tar.gz archive of the skill folder (base64 in JSON)"`
	Bundle   string `json:"bundle,omitempty" jsonschema:"Sigstore bundle (JSON) signing the package digest, kept with the version"`
	SkillOptions
}

// PublishedItem is a catalog item with the version just published.
type PublishedItem struct {
	*skilld.CatalogItem
	Version int    `json:"version"`
	Digest  string `json:"digest"`
	// Unchanged says that the archive held what the item's latest version
	// holds (the same files and description), so no version was made:
	// Version is that latest one (the API answers 200, not 201).
	Unchanged bool `json:"unchanged,omitempty"`
	// Signature is what verifying the version's bundle found; absent
	// when it has none.
	Signature *skilld.SignatureStatus `json:"signature,omitempty"`
}

// AlreadyExisted reports whether publishing found the version it would
// have made.
func (p *PublishedItem) AlreadyExisted() bool { return p.Unchanged }

// PublishCatalogItem publishes a skill archive as the next version of the
// registry's item with the skill's name, creating the item on first
// publish (instance admins only). Versions are immutable. Publishing the
// latest version's files and description again makes no version.
func (s *Service) PublishCatalogItem(ctx context.Context, a Actor, p PublishCatalogItemParams) (*PublishedItem, error) {
	if err := a.requireInstanceAdmin(); err != nil {
		return nil, err
	}
	reg, err := s.db.RegistryGet(ctx, &store.RegistryGetParams{Name: p.Registry})
	if err != nil {
		return nil, err
	}
	var bundle []byte
	if p.Bundle != "" {
		if _, err := signature.ParseBundle([]byte(p.Bundle)); err != nil {
			return nil, invalidField("bundle", "%s", skilld.ErrorMessage(err))
		}
		bundle = []byte(p.Bundle)
	}
	pkg, err := readArchive(ctx, p.Archive)
	if err != nil {
		return nil, err
	}
	pkg, name, desc, _, err := checkSkill(pkg, pkg.TopDir(), p.SkillOptions, fromArchive, false)
	if err != nil {
		return nil, err
	}
	var out *PublishedItem
	var prev *skilld.CatalogItemVersion
	err = s.packages.Put(ctx, pkg, func(q store.Querier) error {
		item, err := q.CatalogItemGet(ctx, &store.CatalogItemGetParams{Registry: reg.Name, Name: name})
		if skilld.ErrorCode(err) == skilld.ENOTFOUND {
			item, err = q.CatalogItemCreate(ctx, &store.CatalogItemCreateParams{RegistryID: reg.ID, Name: name, Description: desc})
		}
		if err != nil {
			return err
		}
		v, err := q.CatalogItemVersionCreate(ctx, &store.CatalogItemVersionCreateParams{ItemID: item.ID, Digest: pkg.Digest(), Description: desc, CreatedBy: a.Name, Bundle: bundle})
		if err != nil {
			return err
		}
		// Compared after the write, which locks the item: the version
		// before is then the one this publish follows, even when another
		// publish committed meanwhile (see newVersion).
		if v.Number > 1 {
			before, err := q.CatalogItemVersionGet(ctx, &store.CatalogItemVersionGetParams{ItemID: item.ID, Number: v.Number - 1})
			if err != nil {
				return err
			}
			if before.Digest == v.Digest && before.Description == v.Description && bytes.Equal(before.Bundle, v.Bundle) {
				prev = before
				return errUnchanged
			}
		}
		item, err = q.CatalogItemGet(ctx, &store.CatalogItemGetParams{ID: item.ID})
		out = &PublishedItem{CatalogItem: item, Version: v.Number, Digest: v.Digest}
		prev = v
		return err
	})
	if errors.Is(err, errUnchanged) {
		item, gerr := s.db.CatalogItemGet(ctx, &store.CatalogItemGetParams{ID: prev.ItemID})
		if gerr != nil {
			return nil, gerr
		}
		out, err = &PublishedItem{CatalogItem: item, Version: prev.Number, Digest: prev.Digest, Unchanged: true}, nil
	}
	if err != nil {
		return nil, err
	}
	if err := s.withSignature(ctx, prev); err != nil {
		return nil, err
	}
	out.Signature = prev.Signature
	return out, nil
}

type CatalogItemVersionParams struct {
	Registry string `json:"registry" path:"r" jsonschema:"the item's registry"`
	Item     string `json:"id" path:"id" jsonschema:"the item's name (or ID)"`
	Version  int    `json:"version,omitempty" query:"version" jsonschema:"item version; the latest when omitted"`
}

// CatalogItemVersion returns one version of a catalog item with what
// verifying its signature finds (any authenticated caller).
func (s *Service) CatalogItemVersion(ctx context.Context, a Actor, p CatalogItemVersionParams) (*skilld.CatalogItemVersion, error) {
	v, err := s.registryItemVersion(ctx, a, p.Registry, p.Item, p.Version)
	if err != nil {
		return nil, err
	}
	return v, s.withSignature(ctx, v)
}

type ListCatalogItemsParams struct {
	Search    string `json:"search,omitempty" query:"search" jsonschema:"text to find in names and descriptions"`
	Registry  string `json:"registry,omitempty" query:"registry" jsonschema:"only items of this registry"`
	Page      int    `json:"page,omitempty" query:"page"`
	PageSize  int    `json:"page_size,omitempty" query:"page_size"`
	PageToken string `json:"page_token,omitempty" query:"page_token" jsonschema:"the next_page_token of the previous page (instead of page)"`
}

type CatalogPage struct {
	Items         []*skilld.CatalogItem `json:"items"`
	Total         int                   `json:"total"`
	Page          int                   `json:"page"`
	PageSize      int                   `json:"page_size"`
	NextPageToken string                `json:"next_page_token,omitempty"`
}

// ListCatalogItems lists catalog items, visible to every workspace.
func (s *Service) ListCatalogItems(ctx context.Context, a Actor, p ListCatalogItemsParams) (*CatalogPage, error) {
	if err := a.can(skilld.RoleViewer); err != nil {
		return nil, err
	}
	if err := s.limitSearches(a, p.Search); err != nil {
		return nil, err
	}
	query := filterDigest(p.Search, p.Registry)
	pg, norm, err := keyed(Page{Page: p.Page, PageSize: p.PageSize}, p.PageToken, "catalog", query)
	if err != nil {
		return nil, err
	}
	params := &store.CatalogItemListParams{Search: p.Search, Page: pg}
	if p.Registry != "" {
		reg, err := s.db.RegistryGet(ctx, &store.RegistryGetParams{Name: p.Registry})
		if err != nil {
			return nil, err
		}
		params.RegistryID = reg.ID
	}
	items, total, err := s.db.CatalogItemList(ctx, params)
	if err != nil {
		return nil, err
	}
	if items == nil {
		items = []*skilld.CatalogItem{}
	}
	out := &CatalogPage{Items: items, Total: total, Page: norm.Page, PageSize: norm.PageSize}
	if len(items) > 0 {
		last := items[len(items)-1]
		out.NextPageToken = nextToken(pg, len(items), total, "catalog", query, last.Registry+"\x00"+last.Name)
	}
	return out, nil
}

// CatalogItemRequest is what a catalog item version's skilld.yaml asks
// for (viewers and up, as the version itself): an admin sees it before
// installing, and approves it once installed.
func (s *Service) CatalogItemRequest(ctx context.Context, a Actor, p CatalogItemVersionParams) (permissions.Request, error) {
	v, err := s.registryItemVersion(ctx, a, p.Registry, p.Item, p.Version)
	if err != nil {
		return permissions.Request{}, err
	}
	req, err := s.packageRequest(ctx, v.Digest, nil)
	return req.Normalized(), err
}
