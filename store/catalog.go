package store

import (
	"context"

	"github.com/skilld/skilld"
)

// CatalogQueries persist registries, catalog items and their versions.
type CatalogQueries interface {
	// RegistryCreate adds a registry. ECONFLICT when the name is taken.
	RegistryCreate(ctx context.Context, p *RegistryCreateParams) (*skilld.Registry, error)
	// RegistryGet finds a registry by ID, else by Name. ENOTFOUND.
	RegistryGet(ctx context.Context, p *RegistryGetParams) (*skilld.Registry, error)
	RegistryList(ctx context.Context, p *RegistryListParams) ([]*skilld.Registry, error)
	// RegistrySetPublicKey replaces a registry's public key ("" removes
	// it). ENOTFOUND.
	RegistrySetPublicKey(ctx context.Context, p *RegistrySetPublicKeyParams) (*skilld.Registry, error)
	// CatalogItemCreate adds an item with no version yet. ECONFLICT when the
	// registry has an item of that name; ENOTFOUND when the registry is
	// missing.
	CatalogItemCreate(ctx context.Context, p *CatalogItemCreateParams) (*skilld.CatalogItem, error)
	// CatalogItemGet finds an item by ID, else by registry name and item
	// name. ENOTFOUND.
	CatalogItemGet(ctx context.Context, p *CatalogItemGetParams) (*skilld.CatalogItem, error)
	// CatalogItemList pages through items by registry and name.
	CatalogItemList(ctx context.Context, p *CatalogItemListParams) ([]*skilld.CatalogItem, int, error)
	// CatalogItemVersionCreate publishes version LatestVersion+1 of an item
	// and updates the item's description, atomically.
	CatalogItemVersionCreate(ctx context.Context, p *CatalogItemVersionCreateParams) (*skilld.CatalogItemVersion, error)
	// CatalogItemVersionGet returns one version (Number 0: the latest).
	CatalogItemVersionGet(ctx context.Context, p *CatalogItemVersionGetParams) (*skilld.CatalogItemVersion, error)
	CatalogItemVersionList(ctx context.Context, p *CatalogItemVersionListParams) ([]*skilld.CatalogItemVersion, error)
}

type RegistryCreateParams struct {
	Name      string
	Trust     skilld.Trust
	PublicKey string
}

type RegistrySetPublicKeyParams struct {
	ID        string
	PublicKey string
}

type RegistryGetParams struct{ ID, Name string }

type RegistryListParams struct{ Page Page }

type CatalogItemCreateParams struct {
	RegistryID  string
	Name        string
	Description string
}

type CatalogItemGetParams struct {
	ID       string
	Registry string
	Name     string
}

type CatalogItemListParams struct {
	RegistryID string
	Search     string
	Page       Page
}

type CatalogItemVersionCreateParams struct {
	ItemID      string
	Digest      string
	Description string
	CreatedBy   string
	// Bundle is the Sigstore bundle JSON; nil for an unsigned version.
	Bundle []byte
}

type CatalogItemVersionGetParams struct {
	ItemID string
	Number int
}

type CatalogItemVersionListParams struct {
	ItemID string
	Page   Page
}
