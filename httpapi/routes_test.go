package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/skilld/skilld/httpapi"
	"github.com/skilld/skilld/service"
)

// TestRoutesCoverOperations: every service operation has exactly one
// route, every route names a real operation, and no two routes collide.
func TestRoutesCoverOperations(t *testing.T) {
	count := map[string]int{}
	seen := map[string]bool{}
	for _, rt := range httpapi.Routes() {
		key := rt.Method + " " + rt.Pattern
		if seen[key] {
			t.Errorf("route %s appears twice", key)
		}
		seen[key] = true
		if rt.Op == "" {
			if rt.Role != httpapi.RolePublic {
				t.Errorf("route %s has no operation but is not public", key)
			}
			continue
		}
		if _, ok := service.OperationByName(rt.Op); !ok {
			t.Errorf("route %s names unknown operation %q", key, rt.Op)
		}
		count[rt.Op]++
		switch {
		case rt.Body == httpapi.BodyNone && rt.Method != http.MethodGet && rt.Method != http.MethodDelete:
			t.Errorf("route %s: a %s without a body", key, rt.Method)
		case rt.Body != httpapi.BodyNone && (rt.Method == http.MethodGet || rt.Method == http.MethodDelete):
			t.Errorf("route %s: a %s with a body", key, rt.Method)
		}
	}
	for _, op := range service.Operations() {
		if count[op.Name] != 1 {
			t.Errorf("operation %s has %d routes, want exactly 1", op.Name, count[op.Name])
		}
		if rt, _ := httpapi.RouteFor(op.Name); (op.Result == nil) != (rt.Status == http.StatusNoContent) {
			t.Errorf("operation %s: result %v but status %d", op.Name, op.Result, rt.Status)
		}
	}
	// Building the handler checks every route's params can be decoded
	// (URL parameters are scalars, archive routes have an archive field).
	(&httpapi.Server{}).Handler()
}
