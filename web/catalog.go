package web

import (
	"net/http"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/permissions"
	"github.com/skilld/skilld/service"
)

type catalogItem struct {
	*skilld.CatalogItem
	Allowed bool
	Verdict string
	// Installed is the workspace's install of the item, nil when it has
	// none: the page links to that skill instead of offering Install.
	Installed *skilld.Install
	// Findings is what the scanner found in the latest version.
	Findings *service.Findings
}

// Worst is the highest severity of the latest version's findings.
func (c catalogItem) Worst() skilld.Severity {
	return (&skilld.PackageScan{Findings: c.Findings.Findings}).Worst()
}

type catalogData struct {
	Q          string
	Registries []*skilld.Registry
	Items      []catalogItem
	Next       string
	Installed  *service.SkillView
	Error      string
}

// catalogPage lists registries and items (catalog.registries.list,
// catalog.items.list) with the workspace's install policy verdict for
// each (policy.get, evaluated by service.Decide, the rule installs use)
// and the workspace's install of each, if any.
func (ui *UI) catalogPage(w http.ResponseWriter, r *http.Request, s *session) {
	ui.showCatalog(w, r, s, http.StatusOK, nil, "")
}

func (ui *UI) showCatalog(w http.ResponseWriter, r *http.Request, s *session, status int, installed *service.SkillView, msg string) {
	ctx, q := r.Context(), r.URL.Query()
	d := catalogData{Q: q.Get("q"), Installed: installed, Error: msg}
	regs, err := ui.svc.ListRegistries(ctx, s.actor, service.ListRegistriesParams{Page: service.Page{PageSize: service.MaxPageSize}})
	if err != nil {
		ui.fail(w, r, s, err)
		return
	}
	d.Registries = regs.Items
	items, err := ui.svc.ListCatalogItems(ctx, s.actor, service.ListCatalogItemsParams{Search: d.Q, PageToken: q.Get("page_token")})
	if err != nil {
		ui.fail(w, r, s, err)
		return
	}
	pol, err := ui.svc.GetPolicy(ctx, s.actor, service.GetPolicyParams{})
	if err != nil {
		ui.fail(w, r, s, err)
		return
	}
	ids := make([]string, len(items.Items))
	for i, it := range items.Items {
		ids[i] = it.ID
	}
	installs, err := ui.svc.InstalledItems(ctx, s.actor, ids)
	if err != nil {
		ui.fail(w, r, s, err)
		return
	}
	for _, it := range items.Items {
		found, err := ui.svc.CatalogItemFindings(ctx, s.actor, service.CatalogItemFindingsParams{Registry: it.Registry, Item: it.Name})
		if err != nil {
			ui.fail(w, r, s, err)
			return
		}
		ci := catalogItem{CatalogItem: it, Allowed: true, Verdict: "allowed by the install policy", Installed: installs[it.ID], Findings: found}
		wh, err := ui.svc.DecideCatalogItem(ctx, pol.InstallRules, it, found)
		if err != nil {
			ui.fail(w, r, s, err)
			return
		}
		if wh != nil {
			ci.Allowed, ci.Verdict = false, "refused by "+wh.String()
		}
		d.Items = append(d.Items, ci)
	}
	if items.NextPageToken != "" {
		d.Next = Prefix + "catalog?q=" + urlQuery(d.Q) + "&page_token=" + urlQuery(items.NextPageToken)
	}
	ui.render(w, r, s, status, "catalog", "Catalog", d)
}

// catalogItemPage shows one catalog item with what the scanner found in
// a version of it with its signature (catalog.items.findings and
// catalog.items.version; ?version=N, the latest when
// omitted).
func (ui *UI) catalogItemPage(w http.ResponseWriter, r *http.Request, s *session) {
	n, err := version(r, "version")
	if err != nil {
		ui.fail(w, r, s, err)
		return
	}
	reg, name := r.PathValue("r"), r.PathValue("name")
	found, err := ui.svc.CatalogItemFindings(r.Context(), s.actor, service.CatalogItemFindingsParams{Registry: reg, Item: name, Version: n})
	if err != nil {
		ui.fail(w, r, s, err)
		return
	}
	iv, err := ui.svc.CatalogItemVersion(r.Context(), s.actor, service.CatalogItemVersionParams{Registry: reg, Item: name, Version: n})
	if err != nil {
		ui.fail(w, r, s, err)
		return
	}
	req, err := ui.svc.CatalogItemRequest(r.Context(), s.actor, service.CatalogItemVersionParams{Registry: reg, Item: name, Version: n})
	if err != nil {
		ui.fail(w, r, s, err)
		return
	}
	ui.render(w, r, s, http.StatusOK, "catalogitem", reg+"/"+name, catalogItemData{Registry: reg, Name: name, Version: n, Findings: found, ItemVersion: iv,
		Requested: req})
}

type catalogItemData struct {
	Registry, Name string
	Version        int
	Findings       *service.Findings
	// ItemVersion is the version shown, with its signature.
	ItemVersion *skilld.CatalogItemVersion
	// Requested is what the version's skilld.yaml asks for.
	Requested permissions.Request
}

// install installs an item (skills.install) and shows the result on the
// catalog page.
func (ui *UI) install(w http.ResponseWriter, r *http.Request, s *session) {
	v, err := ui.svc.InstallSkill(r.Context(), s.actor, service.InstallSkillParams{Item: r.PostFormValue("item")})
	if err != nil {
		ui.showCatalog(w, r, s, status(err), nil, errorText(err))
		return
	}
	ui.showCatalog(w, r, s, http.StatusOK, v, "")
}
