package httpapi

import "testing"

// TestDecoders builds the decoder of every operation route, as its first
// request does: a route whose params could not travel where the route
// puts them (a struct in the query, an archive route without the field
// for the body) panics here rather than on a user's request.
func TestDecoders(t *testing.T) {
	n := 0
	for _, rt := range Routes() {
		if rt.Pattern == HealthPath || rt.Pattern == OpenAPIPath {
			continue
		}
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%s %s: %v", rt.Method, rt.Pattern, p)
				}
			}()
			d := newDecoder(rt, rt.Op.Params)
			if d.params != rt.Op.Params {
				t.Errorf("%s %s: decoder of %v, want %v", rt.Method, rt.Pattern, d.params, rt.Op.Params)
			}
		}()
		n++
	}
	if n == 0 {
		t.Fatal("no operation routes")
	}
	t.Logf("%d decoders", n)
}
