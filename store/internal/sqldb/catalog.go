package sqldb

import (
	"context"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

const registryColumns = `id, name, trust, public_key, created_at`

func scanRegistry(r Row) (*skilld.Registry, error) {
	var g skilld.Registry
	if err := r.Scan(&g.ID, &g.Name, &g.Trust, &g.PublicKey, &g.CreatedAt); err != nil {
		return nil, err
	}
	g.CreatedAt = utc(g.CreatedAt)
	return &g, nil
}

func (q *Queries) RegistryCreate(ctx context.Context, p *store.RegistryCreateParams) (*skilld.Registry, error) {
	g, err := scanRegistry(q.c.ExecRow(ctx, `INSERT INTO registries (id, name, trust, public_key, created_at) VALUES (?, ?, ?, ?, ?) RETURNING `+registryColumns,
		newID(), p.Name, p.Trust, p.PublicKey, now()))
	if err := conflict(err, "registry "+quote(p.Name)+" already exists", "name"); err != nil {
		return nil, err
	}
	return g, internal(err, "creating registry %q", p.Name)
}

func (q *Queries) RegistryGet(ctx context.Context, p *store.RegistryGetParams) (*skilld.Registry, error) {
	key, val := "id", p.ID
	if val == "" {
		key, val = "name", p.Name
	}
	g, err := scanRegistry(q.c.QueryRow(ctx, `SELECT `+registryColumns+` FROM registries WHERE `+key+` = ?`, val))
	return g, notFound(err, "registry %q", val)
}

func (q *Queries) RegistrySetPublicKey(ctx context.Context, p *store.RegistrySetPublicKeyParams) (*skilld.Registry, error) {
	g, err := scanRegistry(q.c.ExecRow(ctx, `UPDATE registries SET public_key = ? WHERE id = ? RETURNING `+registryColumns, p.PublicKey, p.ID))
	return g, notFound(err, "registry %q", p.ID)
}

func (q *Queries) RegistryList(ctx context.Context, p *store.RegistryListParams) ([]*skilld.Registry, error) {
	pg := p.Page.Normalize()
	rows, err := q.c.Query(ctx, `SELECT `+registryColumns+` FROM registries ORDER BY name LIMIT ? OFFSET ?`, pg.Limit, pg.Offset)
	gs, err := collect(rows, err, scanRegistry)
	return gs, internal(err, "listing registries")
}

const catalogItemColumns = `c.id, c.registry_id, c.registry, r.trust, c.name, c.description, c.latest_version, c.created_at, c.updated_at`

func scanCatalogItem(r Row) (*skilld.CatalogItem, error) {
	var c skilld.CatalogItem
	if err := r.Scan(&c.ID, &c.RegistryID, &c.Registry, &c.Trust, &c.Name, &c.Description, &c.LatestVersion,
		&c.CreatedAt, &c.UpdatedAt); err != nil {
		return nil, err
	}
	c.CreatedAt, c.UpdatedAt = utc(c.CreatedAt), utc(c.UpdatedAt)
	return &c, nil
}

func (q *Queries) CatalogItemCreate(ctx context.Context, p *store.CatalogItemCreateParams) (*skilld.CatalogItem, error) {
	id, t := newID(), now()
	n, err := q.c.Exec(ctx, `INSERT INTO catalog_items (id, registry_id, registry, name, description, search_text, created_at, updated_at)
		SELECT ?, r.id, r.name, ?, ?, ?, ?, ? FROM registries r WHERE r.id = ?`,
		id, p.Name, p.Description, store.SearchText(p.Name, p.Description), t, t, p.RegistryID)
	if err := conflict(err, "the registry already has an item named "+quote(p.Name), "name"); err != nil {
		return nil, err
	}
	if err != nil {
		return nil, internal(err, "creating catalog item %q", p.Name)
	}
	if n == 0 {
		return nil, notFound(ErrNoRows, "registry %q", p.RegistryID)
	}
	return q.CatalogItemGet(ctx, &store.CatalogItemGetParams{ID: id})
}

func (q *Queries) CatalogItemGet(ctx context.Context, p *store.CatalogItemGetParams) (*skilld.CatalogItem, error) {
	base := `SELECT ` + catalogItemColumns + ` FROM catalog_items c JOIN registries r ON r.id = c.registry_id WHERE `
	if p.ID != "" {
		c, err := scanCatalogItem(q.c.QueryRow(ctx, base+`c.id = ?`, p.ID))
		return c, notFound(err, "catalog item %q", p.ID)
	}
	c, err := scanCatalogItem(q.c.QueryRow(ctx, base+`r.name = ? AND c.name = ?`, p.Registry, p.Name))
	return c, notFound(err, "catalog item %q", p.Registry+"/"+p.Name)
}

func (q *Queries) CatalogItemList(ctx context.Context, p *store.CatalogItemListParams) ([]*skilld.CatalogItem, int, error) {
	pg := p.Page.Normalize()
	cond, args := "1 = 1", []any{}
	if p.RegistryID != "" {
		cond += " AND c.registry_id = ?"
		args = append(args, p.RegistryID)
	}
	if p.Search != "" {
		cond += ` AND c.search_text LIKE ? ESCAPE '\'`
		args = append(args, store.LikePattern(p.Search))
	}
	var total int
	if err := q.c.QueryRow(ctx, `SELECT COUNT(*) FROM catalog_items c WHERE `+cond, args...).Scan(&total); err != nil {
		return nil, 0, internal(err, "counting catalog items")
	}
	if pg.After != "" {
		reg, name, _ := strings.Cut(pg.After, "\x00")
		cond, args, pg.Offset = cond+" AND (c.registry > ? OR c.registry = ? AND c.name > ?)", append(args, reg, reg, name), 0
	}
	rows, err := q.c.Query(ctx, `SELECT `+catalogItemColumns+` FROM catalog_items c JOIN registries r ON r.id = c.registry_id
		WHERE `+cond+` ORDER BY c.registry, c.name LIMIT ? OFFSET ?`, append(args, pg.Limit, pg.Offset)...)
	items, err := collect(rows, err, scanCatalogItem)
	return items, total, internal(err, "listing catalog items")
}

const itemVersionColumns = `item_id, number, package_digest, description, created_by, created_at, signature_bundle`

func scanItemVersion(r Row) (*skilld.CatalogItemVersion, error) {
	var v skilld.CatalogItemVersion
	var bundle string
	if err := r.Scan(&v.ItemID, &v.Number, &v.Digest, &v.Description, &v.CreatedBy, &v.CreatedAt, &bundle); err != nil {
		return nil, err
	}
	if bundle != "" {
		v.Bundle = []byte(bundle)
	}
	v.CreatedAt = utc(v.CreatedAt)
	return &v, nil
}

func (q *Queries) CatalogItemVersionCreate(ctx context.Context, p *store.CatalogItemVersionCreateParams) (*skilld.CatalogItemVersion, error) {
	var out *skilld.CatalogItemVersion
	err := q.tx(ctx, func(q *Queries) error {
		t := now()
		var number int
		var name string
		err := q.c.ExecRow(ctx, `UPDATE catalog_items SET latest_version = latest_version + 1, description = ?, updated_at = ?
			WHERE id = ? RETURNING latest_version, name`, p.Description, t, p.ItemID).Scan(&number, &name)
		if err != nil {
			return notFound(err, "catalog item %q", p.ItemID)
		}
		if _, err := q.c.Exec(ctx, `UPDATE catalog_items SET search_text = ? WHERE id = ?`, store.SearchText(name, p.Description), p.ItemID); err != nil {
			return internal(err, "publishing catalog item %q", p.ItemID)
		}
		v, err := scanItemVersion(q.c.ExecRow(ctx, `INSERT INTO catalog_item_versions (item_id, number, package_digest, description, created_by, created_at, signature_bundle)
			VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING `+itemVersionColumns, p.ItemID, number, p.Digest, p.Description, p.CreatedBy, t, string(p.Bundle)))
		if constraint(err, "foreign_key") != nil {
			return &skilld.Error{Code: skilld.EINVALID, Message: "package " + p.Digest + " is not stored", Err: err}
		}
		out = v
		return internal(err, "publishing catalog item %q", p.ItemID)
	})
	return out, err
}

func (q *Queries) CatalogItemVersionGet(ctx context.Context, p *store.CatalogItemVersionGetParams) (*skilld.CatalogItemVersion, error) {
	if p.Number == 0 {
		v, err := scanItemVersion(q.c.QueryRow(ctx, `SELECT `+itemVersionColumns+` FROM catalog_item_versions
			WHERE item_id = ? ORDER BY number DESC LIMIT 1`, p.ItemID))
		return v, notFound(err, "published version of catalog item %q", p.ItemID)
	}
	v, err := scanItemVersion(q.c.QueryRow(ctx, `SELECT `+itemVersionColumns+` FROM catalog_item_versions WHERE item_id = ? AND number = ?`,
		p.ItemID, p.Number))
	return v, notFound(err, "version %d of catalog item %q", p.Number, p.ItemID)
}

func (q *Queries) CatalogItemVersionList(ctx context.Context, p *store.CatalogItemVersionListParams) ([]*skilld.CatalogItemVersion, error) {
	pg := p.Page.Normalize()
	rows, err := q.c.Query(ctx, `SELECT `+itemVersionColumns+` FROM catalog_item_versions WHERE item_id = ?
		ORDER BY number DESC LIMIT ? OFFSET ?`, p.ItemID, pg.Limit, pg.Offset)
	vs, err := collect(rows, err, scanItemVersion)
	return vs, internal(err, "listing versions of catalog item %q", p.ItemID)
}
