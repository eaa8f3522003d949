package web_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/service"
)

// catalogEntry is the <li> of one catalog item on the catalog page.
func catalogEntry(t *testing.T, p page, item string) string {
	t.Helper()
	for _, li := range strings.Split(element(t, p, "items"), `<li class="item"`)[1:] {
		li = li[:strings.Index(li, "</li>")]
		if strings.Contains(li, "<strong>"+item+"</strong>") {
			return li
		}
	}
	t.Fatalf("no %s on the catalog page:\n%s", item, p.body)
	return ""
}

// TestCatalogMarks: an item the policy refuses has its Install button
// disabled, described by the refusal; an item the workspace installed is
// marked with the version it has and links to its skill instead.
func TestCatalogMarks(t *testing.T) {
	e := newEnv(t)
	e.fixture()
	if _, err := e.svc.PublishCatalogItem(t.Context(), e.root, service.PublishCatalogItemParams{Registry: "acme",
		Archive: zipOf(t, map[string]string{"SKILL.md": skillMD("fmt", "Formats code.", "Format.\n")})}); err != nil {
		t.Fatal(err)
	}
	b := e.signedIn(e.memberTok)
	cp := b.get("/ui/catalog")
	for _, item := range []string{"acme/lint", "acme/fmt"} {
		if li := catalogEntry(t, cp, item); strings.Contains(li, "disabled") || strings.Contains(li, "Installed") || !strings.Contains(li, ">Install</button>") {
			t.Errorf("%s before any install or rule:\n%s", item, li)
		}
	}
	p := b.post("/ui/catalog/install", url.Values{"csrf": {csrfOf(t, cp)}, "item": {"acme/lint"}})
	sk, err := e.svc.GetSkill(t.Context(), e.member, service.GetSkillParams{SkillRef: service.SkillRef{ID: "lint"}})
	if err != nil {
		t.Fatalf("install: %v\n%s", err, p.body)
	}
	// A newer version of the item: the workspace still has version 1.
	if _, err := e.svc.PublishCatalogItem(t.Context(), e.root, service.PublishCatalogItemParams{Registry: "acme",
		Archive: zipOf(t, map[string]string{"SKILL.md": skillMD("lint", "Lints code.", "Lint better.\n")})}); err != nil {
		t.Fatal(err)
	}
	cp = b.get("/ui/catalog")
	li := catalogEntry(t, cp, "acme/lint")
	if !strings.Contains(li, `class="installed"`) || !strings.Contains(li, `Installed: <a href="/ui/skills/`+sk.ID+`">version 1</a> <span class="muted">(version 2 is out)</span>`) || strings.Contains(li, "<button") {
		t.Errorf("an installed item:\n%s", li)
	}
	if li := catalogEntry(t, cp, "acme/fmt"); strings.Contains(li, "Installed") || !strings.Contains(li, ">Install</button>") {
		t.Errorf("an item not installed:\n%s", li)
	}

	if _, err := e.svc.PutPolicy(t.Context(), e.admin, service.PutPolicyParams{InstallRules: []skilld.InstallRule{{Effect: skilld.EffectDeny, Registry: "acme"}}}); err != nil {
		t.Fatal(err)
	}
	cp = b.get("/ui/catalog")
	li = catalogEntry(t, cp, "acme/fmt")
	if !strings.Contains(li, "refused by install policy rule 1") || !strings.Contains(li, " disabled") ||
		!strings.Contains(li, `aria-describedby="verdict-acme/fmt"`) || !strings.Contains(li, `id="verdict-acme/fmt"`) {
		t.Errorf("an item the policy refuses:\n%s", li)
	}
	if li := catalogEntry(t, cp, "acme/lint"); !strings.Contains(li, "refused by install policy rule 1") || !strings.Contains(li, "Installed") {
		t.Errorf("an installed item the policy now refuses:\n%s", li)
	}
}
