package permissions_test

import (
	"errors"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/permissions"
)

// FuzzParse: Parse never panics; it fails only with EINVALID naming a
// field; what it accepts parses again to the same request (entries are
// already canonical), is covered by itself, and allows each of its hosts.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"network: [api.example.com]\nsecrets: [TOKEN]\n", "network: [\"*.a.b:1\"]", "tools: [Bash]", "x: 1"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := permissions.Parse(data)
		if err != nil {
			var e *skilld.Error
			if !errors.As(err, &e) || e.Code != skilld.EINVALID || len(e.Details) == 0 || e.Details[0].Field == "" {
				t.Fatalf("error %#v is not EINVALID naming a field", err)
			}
		}
		if !permissions.Covers(req, req) {
			t.Fatalf("%+v does not cover itself", req)
		}
		if err != nil {
			return
		}
		doc := "network: ["
		for i, h := range req.Network {
			if i > 0 {
				doc += ", "
			}
			doc += `"` + h + `"`
		}
		doc += "]\n"
		again, err := permissions.Parse([]byte(doc))
		if err != nil || len(again.Network) != len(req.Network) {
			t.Fatalf("accepted hosts %q do not parse again: %v", req.Network, err)
		}
		for i := range again.Network {
			if again.Network[i] != req.Network[i] {
				t.Fatalf("host %q parses again as %q", req.Network[i], again.Network[i])
			}
		}
	})
}
