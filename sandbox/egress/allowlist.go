package egress

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/internal/netaddr"
)

// Allowlist is what a task may reach through the proxy. Its entries are
// names ("api.example.com"), wildcards ("*.example.org": every name under
// example.org at any depth, not example.org itself) and IP addresses
// ("10.0.0.5", "::1"), each with an optional port ("example.com:8443",
// "127.0.0.1:9443", "[::1]:8080").
//
// An entry without a port allows ports 80 and 443 only, those of http and
// https: listing a host should not open its SSH or database port as well.
// An entry with a port allows that port only. Names compare without regard
// to case or a trailing dot; an IPv4-mapped IPv6 address (::ffff:10.0.0.5)
// is the IPv4 address it maps, in entries and in requests alike. An
// address is reached by number only when an entry names that address, and
// only an address entry lets a connection reach a loopback, private or
// otherwise non-public address (see the package's guarantees).
//
// The zero Allowlist allows nothing; PublicWeb allows the public web.
type Allowlist struct {
	entries []entry
	// public lets any name and any public address through on ports 80
	// and 443 (PublicWeb).
	public bool
}

// publicEntry is what PublicWeb matches with.
var publicEntry = entry{name: "*"}

// PublicWeb is the list of an agent that may use the web but names no
// hosts: every name on ports 80 and 443 whose addresses are all public,
// and every public address given by number on those ports. Loopback,
// private and other non-public addresses stay out, as for any name.
func PublicWeb() Allowlist { return Allowlist{public: true} }

// entry is one parsed allowlist entry: a name, a wildcard or an address.
type entry struct {
	name     string     // lower-case, no trailing dot; for a wildcard, what follows "*."
	wildcard bool       // any name under name, not name itself
	ip       netip.Addr // valid for an address entry (then name is "")
	port     int        // 0: ports 80 and 443
}

// ParseAllowlist reads entries. A bad entry (empty, a URL with a scheme or
// a path, a '*' anywhere but a leading "*.", a wildcard over a whole
// top-level domain, a port out of 1-65535, a name that is not a DNS name) is
// EINVALID, naming the entry. Repeated entries count once.
func ParseAllowlist(entries []string) (Allowlist, error) {
	var a Allowlist
	seen := make(map[entry]bool, len(entries))
	for _, raw := range entries {
		e, err := parseEntry(raw)
		if err != nil {
			return Allowlist{}, err
		}
		if !seen[e] {
			seen[e] = true
			a.entries = append(a.entries, e)
		}
	}
	return a, nil
}

// Entries are the list's entries in canonical form (lower-case, no
// trailing dot, IPv6 addresses in brackets), in the order given; each
// parses back to itself.
func (a Allowlist) Entries() []string {
	var out []string
	if a.public {
		out = append(out, publicEntry.name)
	}
	for _, e := range a.entries {
		out = append(out, e.String())
	}
	return out
}

// Union is what a or b allows: the public web when either has it, and the
// entries of both, a's first.
func (a Allowlist) Union(b Allowlist) Allowlist {
	u := Allowlist{public: a.public || b.public, entries: slices.Clone(a.entries)}
	for _, e := range b.entries {
		if !slices.Contains(u.entries, e) {
			u.entries = append(u.entries, e)
		}
	}
	return u
}

// matchName finds the entry that lets name (normalized) through on port.
// When none does, it returns, with false, an entry that names the host for
// other ports, if there is one, so that the refusal can say so.
func (a Allowlist) matchName(name string, port int) (entry, bool) {
	// Named entries first, so that a connection is put down to the entry
	// that names its host rather than to the public web.
	var near entry
	for _, e := range a.entries {
		if e.ip.IsValid() || !e.covers(name) {
			continue
		}
		if e.allowsPort(port) {
			return e, true
		}
		if near.name == "" {
			near = e
		}
	}
	if a.public && publicEntry.allowsPort(port) {
		return publicEntry, true
	}
	return near, false
}

// matchIP finds the address entry that lets ip through on port; like
// matchName, a near miss (the address listed for other ports) comes back
// with false.
func (a Allowlist) matchIP(ip netip.Addr, port int) (entry, bool) {
	ip = ip.Unmap()
	var near entry
	for _, e := range a.entries {
		if !e.ip.IsValid() || e.ip != ip {
			continue
		}
		if e.allowsPort(port) {
			return e, true
		}
		if !near.ip.IsValid() {
			near = e
		}
	}
	if a.public && publicEntry.allowsPort(port) && netaddr.NonPublic(ip) == "" {
		return publicEntry, true
	}
	return near, false
}

// covers reports whether the name entry e names host.
func (e entry) covers(host string) bool {
	if e.wildcard {
		return strings.HasSuffix(host, "."+e.name)
	}
	return host == e.name
}

func (e entry) allowsPort(port int) bool {
	if e.port == 0 {
		return port == 80 || port == 443
	}
	return port == e.port
}

// ports says which ports e allows, for refusals.
func (e entry) ports() string {
	if e.port == 0 {
		return "ports 80 and 443 only"
	}
	return "port " + strconv.Itoa(e.port) + " only"
}

// String is the entry's canonical form.
func (e entry) String() string {
	var h string
	switch {
	case e.ip.IsValid() && e.ip.Is6():
		h = "[" + e.ip.String() + "]"
	case e.ip.IsValid():
		h = e.ip.String()
	case e.wildcard:
		h = "*." + e.name
	default:
		h = e.name
	}
	if e.port != 0 {
		h += ":" + strconv.Itoa(e.port)
	}
	return h
}

func parseEntry(raw string) (entry, error) {
	bad := func(format string, args ...any) (entry, error) {
		return entry{}, skilld.Errorf(skilld.EINVALID, "egress allowlist entry %q: %s", raw, fmt.Sprintf(format, args...))
	}
	s := strings.TrimSpace(raw)
	switch {
	case s == "":
		return bad("empty")
	case strings.Contains(s, "://"):
		return bad("give a host, not a URL (no scheme)")
	case strings.ContainsAny(s, "/?#"):
		return bad("give a host, not a URL (no path)")
	case strings.Contains(s, "@"):
		return bad("give a host, without a user")
	}
	host, port, err := splitHostPort(s, true)
	if err != "" {
		return bad("%s", err)
	}
	var p int
	if port != "" {
		if p = parsePort(port); p == 0 {
			return bad("port %q is not a number from 1 to 65535", port)
		}
	}
	if ip, ok := parseIP(host, s[0] == '['); ok {
		if ip.Zone() != "" {
			return bad("an address with a zone (%%%s) cannot be allowed", ip.Zone())
		}
		return entry{ip: ip.Unmap(), port: p}, nil
	} else if s[0] == '[' {
		return bad("brackets hold an IPv6 address, as in [::1]:8080")
	}
	wildcard := strings.HasPrefix(host, "*.")
	if wildcard {
		host = host[2:]
	}
	if strings.Contains(host, "*") {
		return bad("a wildcard may only begin an entry, as in *.example.org")
	}
	name, why := normalizeName(host)
	if why != "" {
		return bad("%s", why)
	}
	if wildcard && !strings.Contains(name, ".") {
		return bad("*.%s would allow a whole top-level domain: name a domain under it", name)
	}
	return entry{name: name, wildcard: wildcard, port: p}, nil
}

// splitHostPort splits "host", "host:port", "[v6]" or "[v6]:port" (and,
// when bareV6, an IPv6 address without brackets or port). It says what is
// wrong, or "".
func splitHostPort(s string, bareV6 bool) (host, port, why string) {
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return "", "", "unclosed '['"
		}
		host, rest := s[1:end], s[end+1:]
		if rest == "" {
			return host, "", ""
		}
		if rest[0] != ':' {
			return "", "", "only a port may follow ']', as in [::1]:8080"
		}
		if rest == ":" {
			return "", "", "empty port"
		}
		return host, rest[1:], ""
	}
	if bareV6 {
		if ip, err := netip.ParseAddr(s); err == nil && ip.Is6() {
			return s, "", ""
		}
	}
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return s, "", ""
	}
	host, port = s[:i], s[i+1:]
	if strings.Contains(host, ":") {
		return "", "", "write an IPv6 address with a port in brackets, as in [::1]:8080"
	}
	if port == "" {
		return "", "", "empty port"
	}
	return host, port, ""
}

// parseIP reads host as an IP address; inside brackets, only an IPv6 one.
func parseIP(host string, bracketed bool) (netip.Addr, bool) {
	ip, err := netip.ParseAddr(host)
	if err != nil || (bracketed && ip.Is4()) {
		return netip.Addr{}, false
	}
	return ip, true
}

// parsePort reads a decimal port, 1 to 65535, or returns 0.
func parsePort(s string) int {
	if s == "" || len(s) > 5 {
		return 0
	}
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	if n > 65535 {
		return 0
	}
	return n
}

// normalizeName lower-cases a DNS name and drops one trailing dot. It says
// what is wrong with a name that is not one: labels of 1 to 63 letters,
// digits, '-' (not first or last) and '_', 253 characters in all, ASCII
// only (IDNs in their xn-- form), and a last label that is not a number,
// so that "2130706433" or "127.1" can never pass for a name while a
// resolver reads them as addresses.
func normalizeName(s string) (string, string) {
	s = strings.TrimSuffix(s, ".")
	if s == "" {
		return "", "empty host name"
	}
	if len(s) > 253 {
		return "", "host name longer than 253 characters"
	}
	b := []byte(s)
	label := 0 // start of the current label
	for i := 0; i <= len(b); i++ {
		if i < len(b) && b[i] != '.' {
			c := b[i]
			switch {
			case 'A' <= c && c <= 'Z':
				b[i] = c + 'a' - 'A'
			case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_':
			case c >= 0x80:
				return "", "a host name is ASCII: give an international name in its xn-- form"
			default:
				return "", fmt.Sprintf("%q is not allowed in a host name", rune(c))
			}
			continue
		}
		l := b[label:i]
		switch {
		case len(l) == 0:
			return "", "empty label in host name (for every name under a domain, write *.domain)"
		case len(l) > 63:
			return "", "label longer than 63 characters in host name"
		case l[0] == '-' || l[len(l)-1] == '-':
			return "", "a label of a host name cannot begin or end with '-'"
		}
		label = i + 1
	}
	name := string(b)
	if numeric(name[strings.LastIndexByte(name, '.')+1:]) {
		return "", "a host name cannot end in a number: give an address in its usual form"
	}
	return name, ""
}

// numeric reports whether label reads as a number (decimal or 0x hex), as
// inet_aton and URL parsers take the parts of an IPv4 address.
func numeric(label string) bool {
	digits := label
	if len(label) >= 2 && label[0] == '0' && label[1] == 'x' {
		digits = label[2:]
		if digits == "" {
			return true
		}
		return strings.Trim(digits, "0123456789abcdef") == ""
	}
	return strings.Trim(digits, "0123456789") == ""
}
