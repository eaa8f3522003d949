package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"

	"github.com/skilld/skilld/internal/netaddr"
)

// target is the host and port a request names.
type target struct {
	name string     // lower-case, no trailing dot; "" when the client gave an address
	ip   netip.Addr // valid when the client gave an address
	port int
}

// host is the target's name or address, as events report it.
func (t target) host() string {
	if t.ip.IsValid() {
		return t.ip.String()
	}
	return t.name
}

// String is host:port, an IPv6 address in brackets.
func (t target) String() string {
	if t.ip.IsValid() {
		return netip.AddrPortFrom(t.ip, uint16(t.port)).String()
	}
	return t.name + ":" + strconv.Itoa(t.port)
}

// parseTarget reads a request's authority, "host", "host:port" or
// "[v6]:port"; a missing port is defaultPort, or an error when that is 0.
// Addresses come back as IPv4 when they are IPv4-mapped, so that every
// form of an address meets the same checks.
func parseTarget(authority string, defaultPort int) (target, error) {
	host, port, why := splitHostPort(authority, false)
	if why != "" {
		return target{}, fmt.Errorf("target %q: %s", authority, why)
	}
	t := target{port: defaultPort}
	if port != "" {
		if t.port = parsePort(port); t.port == 0 {
			return target{}, fmt.Errorf("target %q: port %q is not a number from 1 to 65535", authority, port)
		}
	}
	if t.port == 0 {
		return target{}, fmt.Errorf("target %q: give a port, as in host:443", authority)
	}
	bracketed := len(authority) > 0 && authority[0] == '['
	if ip, ok := parseIP(host, bracketed); ok {
		if ip.Zone() != "" {
			return target{}, fmt.Errorf("target %q: an address with a zone cannot be reached", authority)
		}
		t.ip = ip.Unmap()
		return t, nil
	} else if bracketed {
		return target{}, fmt.Errorf("target %q: brackets hold an IPv6 address", authority)
	}
	name, why := normalizeName(host)
	if why != "" {
		return target{}, fmt.Errorf("target %q: %s", authority, why)
	}
	t.name = name
	return t, nil
}

// plan is where an admitted target is reached: the addresses checked, in
// the order to try them.
type plan struct {
	entry string
	addrs []netip.Addr
}

// refusal is the proxy's answer when it does not carry a request.
type refusal struct {
	status  int
	reason  string
	ip      string // the address at fault, if any
	allowed bool   // the allowlist let the target through; reaching it failed
}

// admit checks t against the allowlist and, for a name, resolves it and
// checks every address it resolves to.
func (p *Proxy) admit(ctx context.Context, t target) (plan, *refusal) {
	allow := p.cfg.Allow
	if t.ip.IsValid() {
		e, ok := allow.matchIP(t.ip, t.port)
		switch {
		case ok:
			return plan{entry: e.String(), addrs: []netip.Addr{t.ip}}, nil
		case e.ip.IsValid():
			return plan{}, &refusal{status: http.StatusForbidden, ip: t.ip.String(),
				reason: fmt.Sprintf("%s is refused: allowlist entry %q allows %s", t, e.String(), e.ports())}
		}
		return plan{}, &refusal{status: http.StatusForbidden, ip: t.ip.String(),
			reason: fmt.Sprintf("%s is refused: an address is reached only when the allowlist names it, and it does not name %s", t, t.ip)}
	}
	e, ok := allow.matchName(t.name, t.port)
	switch {
	case !ok && e.name != "":
		return plan{}, &refusal{status: http.StatusForbidden,
			reason: fmt.Sprintf("%s is refused: allowlist entry %q allows %s", t, e.String(), e.ports())}
	case !ok:
		return plan{}, &refusal{status: http.StatusForbidden,
			reason: fmt.Sprintf("%s is refused: %s is not on the task's allowlist", t, t.name)}
	}
	ips, err := p.cfg.Resolve(ctx, t.name)
	if err == nil && len(ips) == 0 {
		err = errors.New("no addresses")
	}
	if err != nil {
		return plan{}, &refusal{status: http.StatusBadGateway, allowed: true,
			reason: fmt.Sprintf("%s: cannot resolve %s: %v", t, t.name, err)}
	}
	pl := plan{entry: e.String()}
	for _, raw := range ips {
		ip, ok := netip.AddrFromSlice(raw)
		if !ok {
			return plan{}, &refusal{status: http.StatusBadGateway, allowed: true,
				reason: fmt.Sprintf("%s: the resolver gave a malformed address for %s", t, t.name)}
		}
		ip = ip.Unmap()
		if why := netaddr.NonPublic(ip); why != "" {
			if _, listed := allow.matchIP(ip, t.port); !listed {
				return plan{}, &refusal{status: http.StatusForbidden, ip: ip.String(),
					reason: fmt.Sprintf("%s is refused: %s resolves to %s, %s; a name may lead only to public addresses (list %s itself to allow it)", t, t.name, ip, why, ip)}
			}
		}
		if !slices.Contains(pl.addrs, ip) {
			pl.addrs = append(pl.addrs, ip)
		}
	}
	return pl, nil
}

// dial connects to the plan's addresses in turn, the first that answers
// winning. It returns the address tried last.
func (p *Proxy) dial(ctx context.Context, pl plan, port int) (net.Conn, netip.Addr, error) {
	var first error
	for _, ip := range pl.addrs {
		c, err := p.cfg.Dial(ctx, "tcp", netip.AddrPortFrom(ip, uint16(port)).String())
		if err == nil {
			return c, ip, nil
		}
		if first == nil {
			first = err
		}
		if ctx.Err() != nil {
			return nil, ip, first
		}
	}
	return nil, pl.addrs[len(pl.addrs)-1], first
}
