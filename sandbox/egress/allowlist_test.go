package egress

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/skilld/skilld"
)

func TestParseAllowlist(t *testing.T) {
	a, err := ParseAllowlist([]string{
		"API.Example.com.", " *.example.org ", "example.com:8443", "127.0.0.1:9443", "10.0.0.5",
		"[::1]:8080", "::1", "[::ffff:10.0.0.6]", "api.example.com", "under_score.example.net",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"api.example.com", "*.example.org", "example.com:8443", "127.0.0.1:9443", "10.0.0.5",
		"[::1]:8080", "[::1]", "10.0.0.6", "under_score.example.net"}
	if got := a.Entries(); !slices.Equal(got, want) {
		t.Fatalf("entries %q, want %q", got, want)
	}
	if a, err := ParseAllowlist(nil); err != nil || len(a.Entries()) != 0 {
		t.Fatalf("empty list: %v %v", a, err)
	}
}

func TestParseAllowlistRefuses(t *testing.T) {
	for _, bad := range []string{
		"", "  ", "http://example.com", "example.com/path", "example.com?q", "user@example.com",
		"*", "*:443", "*.com", "**.example.com", "api.*.example.com", "example.*", "*example.com", "a*.example.com",
		"example.com:0", "example.com:65536", "example.com:-1", "example.com:http", "example.com:", "example.com:080808",
		"[::1", "[::1]x", "[::1]:", "[10.0.0.5]", "[example.com]", "::1:80:", "fe80::1%eth0", "[fe80::1%25eth0]:80",
		".example.com", "example..com", "-example.com", "example-.com", "exa mple.com", "bücher.de", "a.b:1:2",
		"2130706433", "127.1", "0x7f.1", "example.0x1f", strings.Repeat("a", 64) + ".com", strings.Repeat("a.", 127) + "com",
	} {
		_, err := ParseAllowlist([]string{"ok.example.com", bad})
		if skilld.ErrorCode(err) != skilld.EINVALID || !strings.Contains(err.Error(), strconv.Quote(bad)) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// TestMatching: ports, case, trailing dots, wildcards, addresses.
func TestMatching(t *testing.T) {
	a, err := ParseAllowlist([]string{"api.example.com", "*.example.org", "db.example.com:5432", "10.0.0.5", "127.0.0.1:9443", "[::1]:8080"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		host string
		port int
		want bool
	}{
		{"api.example.com", 443, true},
		{"api.example.com", 80, true},
		{"api.example.com", 8443, false},
		{"API.EXAMPLE.COM.", 443, true},
		{"example.com", 443, false},
		{"x.api.example.com", 443, false},
		{"db.example.com", 5432, true},
		{"db.example.com", 443, false},
		{"sub.example.org", 443, true},
		{"a.b.example.org", 80, true},
		{"example.org", 443, false},
		{"evil-example.org", 443, false},
		{"example.org.evil.test", 443, false},
		{"10.0.0.5", 443, true},
		{"10.0.0.5", 22, false},
		{"10.0.0.6", 443, false},
		{"127.0.0.1", 9443, true},
		{"127.0.0.1", 443, false},
		{"::1", 8080, true},
		{"::ffff:127.0.0.1", 9443, true},
		{"::ffff:10.0.0.5", 80, true},
	} {
		var got bool
		if ip, err := netip.ParseAddr(c.host); err == nil {
			_, got = a.matchIP(ip, c.port)
		} else {
			name, why := normalizeName(c.host)
			if why != "" {
				t.Fatalf("%s: %s", c.host, why)
			}
			_, got = a.matchName(name, c.port)
		}
		if got != c.want {
			t.Errorf("%s:%d allowed %v, want %v", c.host, c.port, got, c.want)
		}
	}
}

// checkParsed is what the fuzz test holds of every list that parses: its
// canonical form parses back to itself, and every entry lets through what
// it names and no more.
func checkParsed(t *testing.T, a Allowlist) {
	canon := a.Entries()
	b, err := ParseAllowlist(canon)
	if err != nil {
		t.Fatalf("canonical %q does not parse: %v", canon, err)
	}
	if again := b.Entries(); !slices.Equal(again, canon) {
		t.Fatalf("canonical %q parses as %q", canon, again)
	}
	for _, e := range a.entries {
		one := Allowlist{entries: []entry{e}}
		port := e.port
		if port == 0 {
			port = 443
		}
		other := 8080
		if e.port != 0 {
			other = e.port%65535 + 1
		}
		// A request naming what the entry names reads as the same host.
		authority, name := strings.TrimSuffix(e.String(), ":"+strconv.Itoa(e.port)), e.name
		if e.wildcard {
			authority, name = strings.Replace(authority, "*", "x", 1), "x."+e.name
		}
		if tg, err := parseTarget(authority+":"+strconv.Itoa(port), 0); err != nil || tg.ip != e.ip || tg.name != name {
			t.Errorf("%s: a request for %s reads as %+v, %v", e, authority, tg, err)
		}
		if e.ip.IsValid() {
			if _, ok := one.matchIP(e.ip, port); !ok {
				t.Errorf("%s does not allow its own address on %d", e, port)
			}
			if _, ok := one.matchIP(e.ip, other); ok {
				t.Errorf("%s allows port %d", e, other)
			}
			continue
		}
		if n, why := normalizeName(e.name); why != "" || n != e.name {
			t.Errorf("%s: name %q normalizes to %q (%s)", e, e.name, n, why)
		}
		host := e.name
		if e.wildcard {
			host = "x." + e.name
			if _, ok := one.matchName(e.name, port); ok {
				t.Errorf("%s allows its apex", e)
			}
		}
		if _, ok := one.matchName(host, port); !ok {
			t.Errorf("%s does not allow %s:%d", e, host, port)
		}
		if _, ok := one.matchName(host, other); ok {
			t.Errorf("%s allows %s:%d", e, host, other)
		}
	}
}

// FuzzParseAllowlist: any list, one entry a line, parses or is refused
// with EINVALID naming an entry; never a panic. Seeds in
// testdata/fuzz/FuzzParseAllowlist.
func FuzzParseAllowlist(f *testing.F) {
	for _, s := range []string{"api.example.com", "*.example.org\nexample.com:8443", "[::1]:8080\n10.0.0.5", "::ffff:127.0.0.1", "*.com"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		lines := strings.Split(s, "\n")
		a, err := ParseAllowlist(lines)
		if err != nil {
			named := slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(err.Error(), fmt.Sprintf("%q", l)) })
			if skilld.ErrorCode(err) != skilld.EINVALID || !named {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		checkParsed(t, a)
	})
}

// TestUnion: the hosts granted to a command's skills join the agent's
// list; with the public web, a named entry is still the one a connection
// is put down to, and a loopback address needs its own entry either way.
func TestUnion(t *testing.T) {
	skills, err := ParseAllowlist([]string{"127.0.0.1:9443", "api.example.com:8443"})
	if err != nil {
		t.Fatal(err)
	}
	agentList, _ := ParseAllowlist([]string{"example.org", "127.0.0.1:9443"})
	u := agentList.Union(skills)
	if got := strings.Join(u.Entries(), " "); got != "example.org 127.0.0.1:9443 api.example.com:8443" {
		t.Errorf("entries %q", got)
	}
	if _, ok := u.matchName("api.example.com", 8443); !ok {
		t.Error("the skill's host is not allowed")
	}
	if _, ok := agentList.matchName("api.example.com", 8443); ok {
		t.Error("the union changed the agent's list")
	}
	pub := PublicWeb().Union(skills)
	if e, ok := pub.matchName("api.example.com", 8443); !ok || e.String() != "api.example.com:8443" {
		t.Errorf("public web with a named port: %v %v", e, ok)
	}
	if e, ok := pub.matchName("www.example.net", 443); !ok || e != publicEntry {
		t.Errorf("public web: %v %v", e, ok)
	}
	if _, ok := pub.matchIP(netip.MustParseAddr("127.0.0.1"), 9443); !ok {
		t.Error("the loopback address the skill names")
	}
	if _, ok := pub.matchIP(netip.MustParseAddr("127.0.0.1"), 443); ok {
		t.Error("loopback through the public web")
	}
	if got := strings.Join(pub.Entries(), " "); got != "* 127.0.0.1:9443 api.example.com:8443" {
		t.Errorf("public entries %q", got)
	}
}
