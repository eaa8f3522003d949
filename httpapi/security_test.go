package httpapi_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skilld/skilld/httpapi"
)

// samplePath fills a route's wildcards. A route with a wildcard not listed
// here fails the test, so a new route cannot go unchecked.
func samplePath(t *testing.T, rt httpapi.Route, ws string) string {
	t.Helper()
	values := map[string]string{"{ws}": ws, "{id}": "some-id", "{n}": "1", "{path...}": "SKILL.md", "{r}": "acme", "{call}": "call-1", "{name}": "API_TOKEN"}
	segs := strings.Split(rt.Pattern, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, "{") {
			v, ok := values[s]
			if !ok {
				t.Fatalf("route %s %s: no sample value for wildcard %s; add one to samplePath", rt.Method, rt.Pattern, s)
			}
			segs[i] = v
		}
	}
	return strings.Join(segs, "/")
}

// sampleBody is a well-formed body of the route's kind, so every request
// reaches the service and its role checks.
func sampleBody(t *testing.T, rt httpapi.Route) (any, []string) {
	switch rt.Body {
	case httpapi.BodyJSON:
		return map[string]any{}, nil
	case httpapi.BodyArchive:
		return zipOf(t, map[string]string{"SKILL.md": skillMD("sample", "A sample.")}), []string{"Content-Type", "application/zip"}
	}
	return nil, nil
}

// TestEveryRouteRefuses enumerates Routes() and proves, for each, that a
// missing, revoked or expired token is 401, that a token of another
// workspace is 404 on workspace routes, that every role below the route's
// is 403 (a viewer on every write of a workspace, a workspace admin on
// instance routes), and that the route's own role is not refused.
func TestEveryRouteRefuses(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *testEnv) {
		e.must(201, "POST", "/v1/workspaces", e.admin, map[string]any{"name": "team-a"})
		e.must(201, "POST", "/v1/workspaces", e.admin, map[string]any{"name": "team-b"})
		tokens := map[string]string{
			httpapi.RoleViewer:   e.token("team-a", "viewer", "viewer"),
			httpapi.RoleMember:   e.token("team-a", "member", "member"),
			httpapi.RoleAdmin:    e.token("team-a", "admin", "admin"),
			httpapi.RoleInstance: e.admin,
		}
		otherAdmin := e.token("team-b", "admin", "admin")
		revokedTok := e.must(201, "POST", "/v1/workspaces/team-a/tokens", e.admin, map[string]any{"name": "revoked", "role": "admin"})
		e.must(204, "DELETE", "/v1/workspaces/team-a/tokens/"+revokedTok["id"].(string), e.admin, nil)
		expired := e.must(201, "POST", "/v1/workspaces/team-a/tokens", e.admin, map[string]any{"name": "expired", "role": "admin", "expires_in": "1ms"})["token"].(string)
		time.Sleep(20 * time.Millisecond)
		below := map[string][]string{
			httpapi.RoleViewer:   nil,
			httpapi.RoleMember:   {httpapi.RoleViewer},
			httpapi.RoleAdmin:    {httpapi.RoleViewer, httpapi.RoleMember},
			httpapi.RoleInstance: {httpapi.RoleViewer, httpapi.RoleMember, httpapi.RoleAdmin},
		}

		var public []string
		for _, rt := range httpapi.Routes() {
			name := rt.Method + " " + rt.Pattern
			path := samplePath(t, rt, "team-a")
			body, headers := sampleBody(t, rt)
			send := func(token string) response { return e.request(rt.Method, path, token, body, headers...) }
			if rt.Role == httpapi.RolePublic {
				public = append(public, name)
				if r := send(""); r.status != 200 {
					t.Errorf("%s: public route answered %d without a token", name, r.status)
				}
				continue
			}
			if _, known := below[rt.Role]; !known {
				t.Errorf("%s: role %q is not covered by this test", name, rt.Role)
				continue
			}
			for what, token := range map[string]string{"no token": "", "a revoked token": revokedTok["token"].(string),
				"an expired token": expired, "a malformed token": "nonsense"} {
				if r := send(token); r.status != 401 || r.header.Get("WWW-Authenticate") == "" || r.errorCode(t) != "unauthorized" {
					t.Errorf("%s with %s: %d %s", name, what, r.status, r.body)
				}
			}
			if rt.Workspace() {
				if r := send(otherAdmin); r.status != 404 || r.errorCode(t) != "not_found" {
					t.Errorf("%s with another workspace's admin token: %d %s", name, r.status, r.body)
				}
				if rt.Method != "GET" && !slices.Contains(below[rt.Role], httpapi.RoleViewer) {
					t.Errorf("%s: a write route that a viewer may call", name)
				}
			}
			for _, role := range below[rt.Role] {
				if r := send(tokens[role]); r.status != 403 || r.errorCode(t) != "forbidden" {
					t.Errorf("%s with a %s token: %d %s", name, role, r.status, r.body)
				}
			}
			if r := send(tokens[rt.Role]); r.status == 401 || r.status == 403 {
				t.Errorf("%s refuses its own role %s: %d %s", name, rt.Role, r.status, r.body)
			}
		}
		slices.Sort(public)
		if want := []string{"GET " + httpapi.HealthPath, "GET " + httpapi.OpenAPIPath}; !slices.Equal(public, want) {
			t.Errorf("public routes %v, want exactly %v", public, want)
		}
	})
}
