package storetest

import (
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

func newItem(t *testing.T, s store.Querier, registryID, name string, versions int) *skilld.CatalogItem {
	t.Helper()
	it := must[*skilld.CatalogItem](t)(s.CatalogItemCreate(ctx(t), &store.CatalogItemCreateParams{RegistryID: registryID, Name: name, Description: "draft"}))
	for i := range versions {
		must[*skilld.CatalogItemVersion](t)(s.CatalogItemVersionCreate(ctx(t), &store.CatalogItemVersionCreateParams{
			ItemID: it.ID, Digest: newPackage(t, s, name+string(rune('a'+i))), Description: "about " + name, CreatedBy: "root",
		}))
	}
	return must[*skilld.CatalogItem](t)(s.CatalogItemGet(ctx(t), &store.CatalogItemGetParams{ID: it.ID}))
}

func testCatalog(t *testing.T, open Opener) {
	s := open(t)
	acme := must[*skilld.Registry](t)(s.RegistryCreate(ctx(t), &store.RegistryCreateParams{Name: "acme", Trust: skilld.TrustCommunity}))
	_, err := s.RegistryCreate(ctx(t), &store.RegistryCreateParams{Name: "acme", Trust: skilld.TrustOfficial})
	wantCode(t, err, skilld.ECONFLICT)
	_, err = s.RegistryCreate(ctx(t), &store.RegistryCreateParams{Name: "bad", Trust: "trusted"})
	wantCode(t, err, skilld.EINVALID)
	must[*skilld.Registry](t)(s.RegistryCreate(ctx(t), &store.RegistryCreateParams{Name: "Official", Trust: skilld.TrustOfficial}))
	if g := must[*skilld.Registry](t)(s.RegistryGet(ctx(t), &store.RegistryGetParams{Name: "acme"})); g.ID != acme.ID || g.Trust != skilld.TrustCommunity {
		t.Errorf("registry %+v", g)
	}
	if list := must[[]*skilld.Registry](t)(s.RegistryList(ctx(t), &store.RegistryListParams{})); len(list) != 2 || list[0].Name != "Official" {
		t.Errorf("registries in byte order: %+v", list)
	}

	it := must[*skilld.CatalogItem](t)(s.CatalogItemCreate(ctx(t), &store.CatalogItemCreateParams{RegistryID: acme.ID, Name: "pdf", Description: "draft"}))
	if it.LatestVersion != 0 || it.Registry != "acme" || it.Trust != skilld.TrustCommunity {
		t.Fatalf("item %+v", it)
	}
	_, err = s.CatalogItemCreate(ctx(t), &store.CatalogItemCreateParams{RegistryID: acme.ID, Name: "pdf"})
	wantCode(t, err, skilld.ECONFLICT)
	_, err = s.CatalogItemCreate(ctx(t), &store.CatalogItemCreateParams{RegistryID: "missing", Name: "x"})
	wantCode(t, err, skilld.ENOTFOUND)
	_, err = s.CatalogItemVersionGet(ctx(t), &store.CatalogItemVersionGetParams{ItemID: it.ID})
	wantCode(t, err, skilld.ENOTFOUND)

	d1, d2 := newPackage(t, s, "pdf1"), newPackage(t, s, "pdf2")
	v1 := must[*skilld.CatalogItemVersion](t)(s.CatalogItemVersionCreate(ctx(t), &store.CatalogItemVersionCreateParams{ItemID: it.ID, Digest: d1, Description: "Reads PDFs"}))
	v2 := must[*skilld.CatalogItemVersion](t)(s.CatalogItemVersionCreate(ctx(t), &store.CatalogItemVersionCreateParams{ItemID: it.ID, Digest: d2, Description: "Reads and writes PDFs"}))
	if v1.Number != 1 || v2.Number != 2 {
		t.Fatalf("versions %d, %d", v1.Number, v2.Number)
	}
	_, err = s.CatalogItemVersionCreate(ctx(t), &store.CatalogItemVersionCreateParams{ItemID: it.ID, Digest: "sha256:missing"})
	wantCode(t, err, skilld.EINVALID)
	got := must[*skilld.CatalogItem](t)(s.CatalogItemGet(ctx(t), &store.CatalogItemGetParams{Registry: "acme", Name: "pdf"}))
	if got.LatestVersion != 2 || got.Description != "Reads and writes PDFs" {
		t.Errorf("item after publishing: %+v", got)
	}
	if latest := must[*skilld.CatalogItemVersion](t)(s.CatalogItemVersionGet(ctx(t), &store.CatalogItemVersionGetParams{ItemID: it.ID})); latest.Number != 2 || latest.Digest != d2 {
		t.Errorf("latest %+v", latest)
	}
	if old := must[*skilld.CatalogItemVersion](t)(s.CatalogItemVersionGet(ctx(t), &store.CatalogItemVersionGetParams{ItemID: it.ID, Number: 1})); old.Digest != d1 {
		t.Errorf("v1 %+v", old)
	}
	if vs := must[[]*skilld.CatalogItemVersion](t)(s.CatalogItemVersionList(ctx(t), &store.CatalogItemVersionListParams{ItemID: it.ID})); len(vs) != 2 || vs[0].Number != 2 {
		t.Errorf("versions %+v", vs)
	}
	newItem(t, s, acme.ID, "csv", 1)
	items, total, err := s.CatalogItemList(ctx(t), &store.CatalogItemListParams{Search: "WRITES pdf"})
	if err != nil || total != 1 || len(items) != 1 || items[0].Name != "pdf" {
		t.Errorf("search: %d items, total %d, err %v", len(items), total, err)
	}
	items, total, _ = s.CatalogItemList(ctx(t), &store.CatalogItemListParams{RegistryID: acme.ID, Page: store.Page{Limit: 1}})
	if total != 2 || len(items) != 1 || items[0].Name != "csv" {
		t.Errorf("paged list: %d items, total %d", len(items), total)
	}
}

// A version keeps the bundle it was published with, byte for byte; an
// unsigned one has none. A registry's public key is set at creation and
// replaced (rotated) or removed later.
func testCatalogSignatures(t *testing.T, open Opener) {
	s := open(t)
	const key1, key2 = "-----BEGIN PUBLIC KEY-----\nkey one\n-----END PUBLIC KEY-----\n", "-----BEGIN PUBLIC KEY-----\nkey two\n-----END PUBLIC KEY-----\n"
	reg := must[*skilld.Registry](t)(s.RegistryCreate(ctx(t), &store.RegistryCreateParams{Name: "team", Trust: skilld.TrustVerified, PublicKey: key1}))
	if reg.PublicKey != key1 {
		t.Fatalf("created registry key %q", reg.PublicKey)
	}
	if g := must[*skilld.Registry](t)(s.RegistryGet(ctx(t), &store.RegistryGetParams{Name: "team"})); g.PublicKey != key1 {
		t.Errorf("got registry key %q", g.PublicKey)
	}
	if g := must[*skilld.Registry](t)(s.RegistrySetPublicKey(ctx(t), &store.RegistrySetPublicKeyParams{ID: reg.ID, PublicKey: key2})); g.PublicKey != key2 || g.Name != "team" {
		t.Errorf("rotated registry %+v", g)
	}
	if list := must[[]*skilld.Registry](t)(s.RegistryList(ctx(t), &store.RegistryListParams{})); len(list) != 1 || list[0].PublicKey != key2 {
		t.Errorf("listed registries %+v", list)
	}
	if g := must[*skilld.Registry](t)(s.RegistrySetPublicKey(ctx(t), &store.RegistrySetPublicKeyParams{ID: reg.ID})); g.PublicKey != "" {
		t.Errorf("removed key still %q", g.PublicKey)
	}
	_, err := s.RegistrySetPublicKey(ctx(t), &store.RegistrySetPublicKeyParams{ID: "missing", PublicKey: key1})
	wantCode(t, err, skilld.ENOTFOUND)

	it := must[*skilld.CatalogItem](t)(s.CatalogItemCreate(ctx(t), &store.CatalogItemCreateParams{RegistryID: reg.ID, Name: "signed"}))
	bundle := []byte(`{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json","note":"é"}`)
	v1 := must[*skilld.CatalogItemVersion](t)(s.CatalogItemVersionCreate(ctx(t), &store.CatalogItemVersionCreateParams{
		ItemID: it.ID, Digest: newPackage(t, s, "signed1"), Bundle: bundle,
	}))
	if string(v1.Bundle) != string(bundle) {
		t.Errorf("created bundle %q", v1.Bundle)
	}
	v2 := must[*skilld.CatalogItemVersion](t)(s.CatalogItemVersionCreate(ctx(t), &store.CatalogItemVersionCreateParams{ItemID: it.ID, Digest: newPackage(t, s, "signed2")}))
	if v2.Bundle != nil {
		t.Errorf("unsigned version has bundle %q", v2.Bundle)
	}
	if got := must[*skilld.CatalogItemVersion](t)(s.CatalogItemVersionGet(ctx(t), &store.CatalogItemVersionGetParams{ItemID: it.ID, Number: 1})); string(got.Bundle) != string(bundle) {
		t.Errorf("got bundle %q", got.Bundle)
	}
	vs := must[[]*skilld.CatalogItemVersion](t)(s.CatalogItemVersionList(ctx(t), &store.CatalogItemVersionListParams{ItemID: it.ID}))
	if len(vs) != 2 || vs[0].Bundle != nil || string(vs[1].Bundle) != string(bundle) {
		t.Errorf("listed versions %+v", vs)
	}
}
