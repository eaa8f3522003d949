package httpapi_test

import (
	"strings"
	"testing"

	"github.com/skilld/skilld/store/storetest"
)

// TestDatabaseOutage: while PostgreSQL is unreachable the API answers 503
// "unavailable" with Retry-After (authenticated requests included, since
// checking a token reads the database), logs it as a warning with the
// cause, and serves again once the database is back.
func TestDatabaseOutage(t *testing.T) {
	url, outage := storetest.PostgresOutage(t)
	e := newEnvWith(t, storetest.OpenPostgresAt(t, url))
	m := e.token("default", "m", "member")
	skills := "/v1/workspaces/default/skills"
	e.must(200, "GET", skills, m, nil)

	outage.Cut()
	for _, c := range []struct{ method, path, body string }{
		{"GET", skills, ""},
		{"POST", skills, `{"files":{"SKILL.md":"---\nname: x\ndescription: d\n---\n"}}`},
		{"GET", "/v1/workspaces", ""},
	} {
		var body any
		if c.body != "" {
			body = []byte(c.body)
		}
		r := e.request(c.method, c.path, m, body)
		if r.status != 503 || r.errorCode(t) != "unavailable" || r.header.Get("Retry-After") == "" {
			t.Errorf("%s %s during the outage: %d %q Retry-After %q", c.method, c.path, r.status, r.body, r.header.Get("Retry-After"))
		}
		if strings.Contains(string(r.body), "127.0.0.1") {
			t.Errorf("the answer names the database's address: %s", r.body)
		}
	}
	if logs := e.logs.String(); !strings.Contains(logs, "level=WARN msg=unavailable") || strings.Contains(logs, "internal error") {
		t.Errorf("server log during the outage:\n%s", logs)
	}
	outage.Restore()
	e.must(200, "GET", skills, m, nil)
	e.must(201, "POST", skills, m, []byte(`{"files":{"SKILL.md":"---\nname: x\ndescription: d\n---\n"}}`))
}
