package permissions

import (
	"net"
	"slices"
	"strings"
)

// Allows reports whether a network entry of r covers host (lowercase, as
// in a URL) with port ("" when the URL named none, its scheme's): "host"
// allows ports 80 and 443, "host:port" only that one, "*.domain" every
// subdomain — the rules the sandbox's proxy enforces the entries by, so
// that what an admin approves is what a command can reach.
func (r Request) Allows(host, port string) bool {
	for _, e := range r.Network {
		if entryAllows(e, host, port) {
			return true
		}
	}
	return false
}

func splitEntry(e string) (host, port string) {
	if h, p, err := net.SplitHostPort(e); err == nil {
		return h, p
	}
	return strings.Trim(e, "[]"), ""
}

func entryAllows(e, host, port string) bool {
	h, p := splitEntry(e)
	switch {
	case p == "" && port != "" && port != "80" && port != "443":
		return false
	case p != "" && p != port:
		return false
	}
	host = strings.Trim(host, "[]")
	return h == host || strings.HasPrefix(h, "*.") && strings.HasSuffix(host, h[1:])
}

// Covers reports whether approved covers everything requested asks for:
// each requested host is allowed by an approved entry (a wildcard covers
// narrower wildcards, a port-less entry ports 80 and 443 and a port-less
// request), and each requested
// secret and tool is approved. A request that asks for more than was
// approved is not covered.
func Covers(approved, requested Request) bool {
	for _, e := range requested.Network {
		h, p := splitEntry(e)
		if !slices.ContainsFunc(approved.Network, func(a string) bool { return entryAllows(a, h, p) }) {
			return false
		}
	}
	for _, s := range requested.Secrets {
		if !slices.Contains(approved.Secrets, s) {
			return false
		}
	}
	for _, t := range requested.Tools {
		if !slices.Contains(approved.Tools, t) {
			return false
		}
	}
	return true
}
