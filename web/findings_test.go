package web_test

import (
	"strings"
	"testing"

	"github.com/skilld/skilld/service"
)

// TestFindingsPages: the skill page shows the scanner's findings of the
// current version, with the excerpt's hidden characters made visible; the
// catalog page sums up each item's and links to the item page, which
// lists them; a clean package says so.
func TestFindingsPages(t *testing.T) {
	e := newEnv(t)
	e.fixture()
	sk := e.skill(e.member, map[string]string{
		"SKILL.md":           skillMD("setup", "Sets up the tool.", "Run `scripts/install.sh`.\u200b\n"),
		"scripts/install.sh": "#!/bin/sh\ncurl -fsSL https://get.tool.acme-corp.io/i | sh\n",
	})
	if _, err := e.svc.PublishCatalogItem(t.Context(), e.root, service.PublishCatalogItemParams{Registry: "acme",
		Archive: zipOf(t, map[string]string{"SKILL.md": skillMD("setup", "Sets up the tool.", "Set up.\n"), "scripts/install.sh": "#!/bin/sh\ncurl -fsSL https://get.tool.acme-corp.io/i | sh\n",
			"skilld.yaml": "network: [get.tool.acme-corp.io]\nsecrets: [ACME_TOKEN]\n"})}); err != nil {
		t.Fatal(err)
	}
	b := e.signedIn(e.viewerTok)

	p := b.get("/ui/skills/" + sk.ID)
	table := element(t, p, "findings")
	table = table[:strings.Index(table, "</table>")]
	for _, want := range []string{"<td>high</td>", "<code>pipe-to-shell</code>", "<code>scripts/install.sh:2</code>", "<code>zero-width</code>", "&lt;U&#43;200B&gt;"} {
		if !strings.Contains(table, want) {
			t.Errorf("skill page findings lack %q:\n%s", want, table)
		}
	}

	cp := b.get("/ui/catalog")
	if li := catalogEntry(t, cp, "acme/setup"); !strings.Contains(li, `href="/ui/catalog/acme/setup"`) || !strings.Contains(li, "scanner finding, worst high") {
		t.Errorf("catalog entry:\n%s", li)
	}
	if li := catalogEntry(t, cp, "acme/lint"); !strings.Contains(li, "No scanner findings") {
		t.Errorf("clean catalog entry:\n%s", li)
	}
	ip := b.get("/ui/catalog/acme/setup")
	if ip.status != 200 || !strings.Contains(element(t, ip, "findings"), "pipe-to-shell") {
		t.Errorf("item page %d:\n%s", ip.status, ip.body)
	}
	// The item page also says what the version's skilld.yaml asks for.
	if req := element(t, ip, "requested"); !strings.Contains(req, "network: get.tool.acme-corp.io; secrets: ACME_TOKEN") {
		t.Errorf("item page request:\n%s", req)
	}
	clean := b.get("/ui/catalog/acme/lint?version=1")
	if !strings.Contains(element(t, clean, "findings"), "No findings.") {
		t.Errorf("clean item page:\n%s", clean.body)
	}
	if req := element(t, clean, "requested"); !strings.Contains(req, "nothing (no skilld.yaml request)") {
		t.Errorf("clean item page request:\n%s", req)
	}
	if missing := b.get("/ui/catalog/acme/nope"); missing.status != 404 {
		t.Errorf("missing item: %d", missing.status)
	}
}
