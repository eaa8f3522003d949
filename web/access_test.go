package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestViewerRefused: a viewer sees every page, and every changing form
// answers with the service's forbidden message.
func TestViewerRefused(t *testing.T) {
	e := newEnv(t)
	f := e.fixture()
	b := e.signedIn(e.viewerTok)
	for _, path := range f.pages() {
		if p := b.get(path); p.status != http.StatusOK {
			t.Errorf("viewer GET %s: %d", path, p.status)
		}
	}
	csrf := b.csrf()
	id := f.skill.ID
	forms := map[string]url.Values{
		"/ui/skills/import":                                {"github_url": {"https://github.com/o/r"}},
		"/ui/skills/" + id + "/edit":                       {"file:SKILL.md": {"x"}},
		"/ui/catalog/install":                              {"item": {"acme/lint"}},
		"/ui/agents/new":                                   {"name": {"x"}},
		"/ui/agents/" + f.agent.ID:                         {"name": {"x"}},
		"/ui/tasks":                                        {"agent": {f.agent.ID}, "input": {"x"}},
		"/ui/tasks/" + f.task.ID + "/cancel":               {},
		"/ui/tasks/" + f.task.ID + "/approvals/c1/approve": {},
		"/ui/skills/" + id + "/permissions/approve":        {},
	}
	for path, form := range forms {
		form.Set("csrf", csrf)
		p := b.post(path, form)
		if p.status != http.StatusForbidden || !strings.Contains(errorText(t, p), "this needs the member role; the token has the viewer role") &&
			!strings.Contains(errorText(t, p), "this needs the admin role") {
			t.Errorf("viewer POST %s: %d %q", path, p.status, p.body)
		}
	}
	p := b.upload("/ui/skills/upload", url.Values{"csrf": {csrf}}, "archive", "s.zip", zipOf(t, map[string]string{"SKILL.md": skillMD("v", "V.", "x")}))
	if p.status != http.StatusForbidden || !strings.Contains(errorText(t, p), "member role") {
		t.Errorf("viewer upload: %d", p.status)
	}
	// The editor page itself opens; its submit is what is refused.
	ep := b.get("/ui/skills/" + id + "/edit")
	p = b.post("/ui/skills/"+id+"/edit", url.Values{"csrf": {csrfOf(t, ep)}, "file:SKILL.md": {"x"}})
	if !strings.Contains(errorText(t, p), "this needs the member role") {
		t.Errorf("viewer edit: %q", errorText(t, p))
	}
	// A member may not decide approvals either: that is for admins.
	m := e.signedIn(e.memberTok)
	p = m.post("/ui/tasks/"+f.task.ID+"/approvals/c1/deny", url.Values{"csrf": {m.csrf()}})
	if p.status != http.StatusForbidden || !strings.Contains(errorText(t, p), "this needs the admin role") {
		t.Errorf("member deny: %d %s", p.status, p.body)
	}
}

// TestOtherWorkspace404: another workspace's objects are not found, on
// pages, downloads, the event stream and forms alike.
func TestOtherWorkspace404(t *testing.T) {
	e := newEnv(t)
	f := e.fixture()
	b := e.signedIn(e.otherTok)
	id := f.skill.ID
	paths := append(f.pages()[2:7], "/ui/skills/"+id+"/raw/logo.bin", "/ui/agents/"+f.agent.ID, "/ui/tasks/"+f.task.ID, "/ui/tasks/"+f.task.ID+"/events")
	for _, path := range paths {
		if p := b.get(path); p.status != http.StatusNotFound || !strings.Contains(p.body, `id="error"`) {
			t.Errorf("other workspace GET %s: %d", path, p.status)
		}
	}
	csrf := b.csrf()
	for _, path := range []string{"/ui/skills/" + id + "/edit", "/ui/agents/" + f.agent.ID, "/ui/tasks/" + f.task.ID + "/cancel"} {
		if p := b.post(path, url.Values{"csrf": {csrf}, "file:SKILL.md": {"x"}, "name": {"x"}}); p.status != http.StatusNotFound {
			t.Errorf("other workspace POST %s: %d", path, p.status)
		}
	}
	if p := b.get("/ui/skills"); strings.Contains(p.body, "report") {
		t.Errorf("another workspace's skill is listed")
	}
}
