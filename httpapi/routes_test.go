package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/skilld/skilld/httpapi"
	"github.com/skilld/skilld/service"
)

// TestRoutesCoverOperations: every operation of service.Operations has
// exactly one route, every route's operation is one of them, and no two
// routes collide.
func TestRoutesCoverOperations(t *testing.T) {
	table := map[string]service.Operation{}
	for _, op := range service.Operations() {
		table[op.Name] = op
	}
	count := map[string]int{}
	seen := map[string]bool{}
	for _, rt := range httpapi.Routes() {
		key := rt.Method + " " + rt.Pattern
		if seen[key] {
			t.Errorf("route %s appears twice", key)
		}
		seen[key] = true
		if rt.Op.Name == "" {
			if rt.Role != httpapi.RolePublic {
				t.Errorf("route %s has no operation but is not public", key)
			}
			continue
		}
		if op, ok := table[rt.Op.Name]; !ok || op.Params != rt.Op.Params || op.Result != rt.Op.Result {
			t.Errorf("route %s serves %s, which is not in service.Operations", key, rt.Op.Name)
		}
		count[rt.Op.Name]++
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
		if rt, _ := httpapi.RouteFor(op); (op.Result == nil) != (rt.Status == http.StatusNoContent) {
			t.Errorf("operation %s: result %v but status %d", op.Name, op.Result, rt.Status)
		}
	}
	// Building the handler checks every route's params can be decoded
	// (URL parameters are scalars, archive routes have an archive field).
	(&httpapi.Server{}).Handler()
}
