package permissions_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/permissions"
)

func TestParseAccepts(t *testing.T) {
	req, err := permissions.Parse([]byte("network: [API.Example.com, \"api.other.org:8443\", \"*.cdn.net\", 10.0.0.1:80, \"[2001:db8::1]:443\"]\nsecrets: [API_TOKEN, _X1]\ntools: [Bash]\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := permissions.Request{
		Network: []string{"api.example.com", "api.other.org:8443", "*.cdn.net", "10.0.0.1:80", "[2001:db8::1]:443"},
		Secrets: []string{"API_TOKEN", "_X1"},
		Tools:   []string{"Bash"},
	}
	if !reflect.DeepEqual(req, want) {
		t.Errorf("parsed %+v, want %+v", req, want)
	}
	for _, doc := range []string{"", "\n", "network: []\n", "network:\nsecrets:\n"} {
		req, err := permissions.Parse([]byte(doc))
		if err != nil || !req.Empty() {
			t.Errorf("%q: %+v, %v; want an empty request", doc, req, err)
		}
	}
}

func TestParseRejectsNamingTheField(t *testing.T) {
	for _, c := range []struct{ doc, field string }{
		{"network: [\"https://api.example.com\"]", "network[0]"},
		{"network: [ok.example.com, \"a b\"]", "network[1]"},
		{"network: [\"host:0\"]", "network[0]"},
		{"network: [\"host:99999\"]", "network[0]"},
		{"network: [\"host:08\"]", "network[0]"},
		{"network: [\"*.com\"]", "network[0]"},
		{"network: [\"-bad.example.com\"]", "network[0]"},
		{"network: [\"2001:db8::1\"]", "network[0]"},
		{"network: [a.example.com, A.example.com]", "network[1]"},
		{"network: api.example.com", "network"},
		{"network: [[a]]", "network[0]"},
		{"secrets: [api_token]", "secrets[0]"},
		{"secrets: [1TOKEN]", "secrets[0]"},
		{"secrets: [\"A-B\"]", "secrets[0]"},
		{"secrets: {A: b}", "secrets"},
		{"tools: [\"rm -rf\"]", "tools[0]"},
		{"env: [A]", "env"},
		{"network: []\nnetwork: []", permissions.File},
		{"- a\n- b", permissions.File},
		{"network: [", permissions.File},
	} {
		_, err := permissions.Parse([]byte(c.doc))
		var e *skilld.Error
		if !errors.As(err, &e) || e.Code != skilld.EINVALID || len(e.Details) == 0 || e.Details[0].Field != c.field {
			t.Errorf("%q: %#v, want EINVALID naming %s", c.doc, err, c.field)
		}
	}
}

// The valid entries survive an error, for the scanner.
func TestParseKeepsValidEntries(t *testing.T) {
	req, err := permissions.Parse([]byte("network: [a.example.com, \"bad host\"]\nsecrets: [OK, bad]"))
	if err == nil || !reflect.DeepEqual(req.Network, []string{"a.example.com"}) || !reflect.DeepEqual(req.Secrets, []string{"OK"}) {
		t.Errorf("got %+v, %v", req, err)
	}
}

func TestAllows(t *testing.T) {
	r := permissions.Request{Network: []string{"api.example.com", "db.example.com:5432", "*.cdn.net", "[::1]:8080"}}
	for _, c := range []struct {
		host, port string
		want       bool
	}{
		{"api.example.com", "", true},
		{"api.example.com", "443", true},
		{"api.example.com", "80", true},
		// A host without a port means the web's ports, as the proxy
		// enforces it: not its SSH or another service's port.
		{"api.example.com", "8443", false},
		{"api.example.com", "22", false},
		{"db.example.com", "5432", true},
		{"db.example.com", "", false},
		{"db.example.com", "5433", false},
		{"x.cdn.net", "", true},
		{"a.b.cdn.net", "443", true},
		{"cdn.net", "", false},
		{"evil-cdn.net", "", false},
		{"[::1]", "8080", true},
		{"other.example.com", "", false},
	} {
		if got := r.Allows(c.host, c.port); got != c.want {
			t.Errorf("Allows(%q, %q) = %v", c.host, c.port, got)
		}
	}
}

func TestCovers(t *testing.T) {
	approved := permissions.Request{Network: []string{"api.example.com", "db.example.com:5432", "*.cdn.net"}, Secrets: []string{"TOKEN"}, Tools: []string{"Bash"}}
	for _, c := range []struct {
		name string
		req  permissions.Request
		want bool
	}{
		{"nothing", permissions.Request{}, true},
		{"the same", approved, true},
		{"less", permissions.Request{Network: []string{"api.example.com:443"}, Secrets: []string{"TOKEN"}}, true},
		{"a narrower wildcard", permissions.Request{Network: []string{"*.eu.cdn.net", "x.cdn.net:80"}}, true},
		{"a new host", permissions.Request{Network: []string{"api.example.com", "new.example.com"}}, false},
		{"all ports of a one-port host", permissions.Request{Network: []string{"db.example.com"}}, false},
		{"another port", permissions.Request{Network: []string{"db.example.com:5433"}}, false},
		{"the wildcard's own domain", permissions.Request{Network: []string{"cdn.net"}}, false},
		{"a wider wildcard", permissions.Request{Network: []string{"*.net"}}, false},
		{"a new secret", permissions.Request{Secrets: []string{"TOKEN", "OTHER"}}, false},
		{"a new tool", permissions.Request{Tools: []string{"Write"}}, false},
		{"another port of a port-less host", permissions.Request{Network: []string{"api.example.com:22"}}, false},
	} {
		if got := permissions.Covers(approved, c.req); got != c.want {
			t.Errorf("%s: Covers = %v, want %v", c.name, got, c.want)
		}
	}
	if permissions.Covers(permissions.Request{}, approved) {
		t.Error("an empty approval covers a request")
	}
}
