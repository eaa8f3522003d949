// Package netaddr classifies IP addresses: which are the public internet
// and which are the host, its networks or ranges no public server holds.
// The sandbox's egress proxy and the GitHub importer refuse the same ones.
package netaddr

import (
	"net/netip"
)

// reserved is a range of addresses a name may not lead to, and what it is.
type reserved struct {
	prefix netip.Prefix
	what   string
}

// reservedRanges are the addresses that are not the public internet: the
// host itself, the networks around it, and ranges no public server
// holds. A client reaching one through a name it was allowed (or through
// a name whose DNS an attacker controls) would reach the server's own
// loopback listeners, the cloud's metadata service (169.254.169.254) or
// the operator's private network. The ranges that embed an IPv4 address
// (IPv4-mapped, NAT64, 6to4) are checked through that address in
// NonPublic; the others are refused whole.
//
// It is a function, not a table in a variable, so that nothing can change
// it.
func reservedRanges() []reserved {
	r := func(p, what string) reserved { return reserved{netip.MustParsePrefix(p), what} }
	return []reserved{
		r("0.0.0.0/8", "a \"this network\" address"),
		r("10.0.0.0/8", "a private address"),
		r("100.64.0.0/10", "a carrier-grade NAT address"),
		r("127.0.0.0/8", "a loopback address"),
		r("169.254.0.0/16", "a link-local address"),
		r("172.16.0.0/12", "a private address"),
		r("192.0.0.0/24", "an IETF protocol address"),
		r("192.0.2.0/24", "a documentation address"),
		r("192.168.0.0/16", "a private address"),
		r("198.18.0.0/15", "a benchmarking address"),
		r("198.51.100.0/24", "a documentation address"),
		r("203.0.113.0/24", "a documentation address"),
		r("224.0.0.0/4", "a multicast address"),
		r("240.0.0.0/4", "a reserved address"),
		r("::/128", "the unspecified address"),
		r("::1/128", "a loopback address"),
		r("::/96", "an IPv4-compatible address"),
		r("64:ff9b:1::/48", "a local NAT64 address"),
		r("100::/64", "a discard address"),
		r("2001::/32", "a Teredo address"),
		r("2001:db8::/32", "a documentation address"),
		r("fc00::/7", "a unique local (private) address"),
		r("fe80::/10", "a link-local address"),
		r("fec0::/10", "a site-local address"),
		r("ff00::/8", "a multicast address"),
	}
}

// NonPublic says what ip is when it is not a public unicast address
// (loopback, private, link-local, unspecified, multicast, carrier-grade
// NAT, reserved, or one of those embedded in an IPv4-mapped, NAT64 or 6to4
// address), or "" when it is public.
func NonPublic(ip netip.Addr) string {
	if ip.Zone() != "" {
		return "an address with a zone"
	}
	if ip.Is4In6() {
		if why := NonPublic(ip.Unmap()); why != "" {
			return "an IPv4-mapped form of " + why
		}
		return ""
	}
	if ip.Is6() {
		b := ip.As16()
		if netip.MustParsePrefix("64:ff9b::/96").Contains(ip) {
			if why := NonPublic(netip.AddrFrom4([4]byte(b[12:16]))); why != "" {
				return "a NAT64 form of " + why
			}
			return ""
		}
		if netip.MustParsePrefix("2002::/16").Contains(ip) {
			if why := NonPublic(netip.AddrFrom4([4]byte(b[2:6]))); why != "" {
				return "a 6to4 form of " + why
			}
			return ""
		}
	}
	if !ip.IsValid() {
		return "not an address"
	}
	for _, r := range reservedRanges() {
		if r.prefix.Contains(ip) {
			return r.what
		}
	}
	return ""
}
