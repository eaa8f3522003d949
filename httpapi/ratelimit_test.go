package httpapi_test

import (
	"strings"
	"testing"

	"github.com/skilld/skilld/httpapi"
	"github.com/skilld/skilld/importer"
	"github.com/skilld/skilld/service"
)

// TestSearchRateLimit: past its workspace's searches per minute a search
// is answered 429 rate_limited with Retry-After; a list without a search
// is not limited.
func TestSearchRateLimit(t *testing.T) {
	e := newEnv(t, firstDriver(t))
	e.svc = service.New(e.db, e.svc.Packages().Blobs, &importer.GitHub{APIURL: e.github.URL}, service.Config{Rates: service.Rates{Searches: 2}})
	e.serve(&httpapi.Server{})
	for range 2 {
		e.must(200, "GET", "/v1/workspaces/default/skills?search=pdf", e.admin, nil)
	}
	r := e.request("GET", "/v1/workspaces/default/skills?search=pdf", e.admin, nil)
	if r.status != 429 || r.header.Get("Retry-After") != "30" || !strings.Contains(string(r.body), "--search-rate") {
		t.Errorf("a third search: %d %q %s", r.status, r.header.Get("Retry-After"), r.body)
	}
	e.must(200, "GET", "/v1/workspaces/default/skills", e.admin, nil)
}
