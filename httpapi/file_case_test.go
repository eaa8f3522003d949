package httpapi_test

import (
	"strings"
	"testing"
)

// TestFileCaseMiss: the file route does not guess: a path that misses only
// by letter case is 404, with the file's real name suggested.
func TestFileCaseMiss(t *testing.T) {
	e := newEnv(t, firstDriver(t))
	m := e.token("default", "m", "member")
	sk := e.must(201, "POST", "/v1/workspaces/default/skills", m, map[string]any{"files": map[string]string{
		"SKILL.md": skillMD("pdf", "Works with PDF files."), "reference.md": "# Reference\n"}})
	r := e.request("GET", "/v1/workspaces/default/skills/"+sk["id"].(string)+"/files/REFERENCE.md", m, nil)
	if r.status != 404 || r.errorCode(t) != "not_found" || !strings.HasSuffix(r.errorMessage(t), `skill "pdf"; did you mean "reference.md"?`) {
		t.Errorf("a case-only miss: %d %s", r.status, r.body)
	}
	r = e.request("GET", "/v1/workspaces/default/skills/"+sk["id"].(string)+"/files/reference.md", m, nil)
	if r.status != 200 || string(r.body) != "# Reference\n" {
		t.Errorf("the file itself: %d %s", r.status, r.body)
	}
}
