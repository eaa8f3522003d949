package importer

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/skilld/skilld/internal/netaddr"
)

// AddressRefusedError is a connection the importer would not make: GitHub
// (or a redirect it answered) led to an address that is not the public
// internet — loopback, private, link-local, unspecified, multicast and
// the like — on a host the operator did not configure. Without it an
// import could be pointed at the server's own listeners, its cloud's
// metadata service or its private network.
type AddressRefusedError struct {
	// Host is the host name the URL gave; Addr the address it led to.
	Host string
	Addr netip.AddrPort
	// Why is what Addr is ("a loopback address").
	Why string
	// Redirect is set when a redirect led there.
	Redirect bool
}

func (e *AddressRefusedError) Error() string {
	what := "connection"
	if e.Redirect {
		what = "redirect"
	}
	host := e.Addr.String()
	if name, _, err := net.SplitHostPort(e.Host); err == nil && name != e.Addr.Addr().String() {
		host = e.Host + " (" + e.Addr.String() + ")"
	}
	return fmt.Sprintf("%s to %s, %s, refused", what, host, e.Why)
}

// dialPolicy is what a request's connections may reach, carried in its
// context to the dialer: the host names the operator configured (the API
// URL's, and the proxy's when one is in the environment), whose addresses
// are theirs to choose, and whether the request follows a redirect.
type dialPolicy struct {
	trusted  []string // lower-case host names, without ports
	redirect bool
}

type dialPolicyKey struct{}

// guardedDial connects like the default transport, but checks the address
// each connection actually goes to, after name resolution, so that a name
// that resolves (or is rebound) to a private address is caught as surely
// as a literal one. Connections without a policy in their context are not
// the importer's and are not checked.
func guardedDial(ctx context.Context, network, addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	p, ok := ctx.Value(dialPolicyKey{}).(dialPolicy)
	host, _, err := net.SplitHostPort(addr)
	if ok && err == nil && !p.trusts(host) {
		d.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("connecting to %s: unexpected address %q", addr, address)
			}
			if why := netaddr.NonPublic(ap.Addr()); why != "" {
				return &AddressRefusedError{Host: addr, Addr: ap, Why: why, Redirect: p.redirect}
			}
			return nil
		}
	}
	return d.DialContext(ctx, network, addr)
}

func (p dialPolicy) trusts(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, t := range p.trusted {
		if host == t {
			return true
		}
	}
	return false
}

// policyFor is the dial policy of a request to target: the API's host is
// trusted, and so is the environment's proxy for target, which is the one
// dialed when there is one (its own checks are its operator's).
func policyFor(api *url.URL, target *http.Request, redirect bool) dialPolicy {
	p := dialPolicy{redirect: redirect}
	p.trusted = append(p.trusted, strings.ToLower(strings.TrimSuffix(api.Hostname(), ".")))
	if proxy, err := http.ProxyFromEnvironment(target); err == nil && proxy != nil {
		p.trusted = append(p.trusted, strings.ToLower(strings.TrimSuffix(proxy.Hostname(), ".")))
	}
	return p
}
