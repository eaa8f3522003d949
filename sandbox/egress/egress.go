// Package egress is the only way a sandboxed command reaches the network.
//
// Commands run in a network namespace of their own, with nothing but a
// loopback device. When an agent may use the network, the server runs one
// Proxy per task, outside the sandbox, and opens its listener inside each
// command's own namespace (127.0.0.1:3128 there), before the command
// starts; HTTP_PROXY and HTTPS_PROXY name it. So whatever a command does,
// its bytes leave only through the proxy, and the proxy decides where
// they go. (Anthropic's sandbox-runtime bridges a unix socket into the
// sandbox instead; a listener made in the command's namespace needs no
// helper process inside it.)
//
// What the proxy guarantees:
//
//   - Two ways through: CONNECT host:port, a tunnel opened after a 200;
//     and plain HTTP requests in absolute form (GET http://host/path), sent
//     on with hop-by-hop and Proxy-* headers removed, one per connection.
//     Anything else is answered 400 (a request addressed to the proxy
//     itself, an https:// URL outside a tunnel) or 405 (OPTIONS *, PRI *).
//   - Only what the task's Allowlist names passes, on the ports it allows.
//   - A name is resolved by the proxy, outside the sandbox. Every address it
//     resolves to must be public (not loopback, private, link-local,
//     unspecified, multicast, carrier-grade NAT, reserved, nor one of those
//     in IPv4-mapped, NAT64 or 6to4 form) unless the allowlist names that
//     very address; one bad address refuses the name. The proxy then
//     connects to the addresses it checked and never resolves the name
//     again, so DNS rebinding cannot move a connection somewhere else.
//   - An address given as a number is reached only when the allowlist names
//     it, and then whatever kind of address it is.
//   - Every refusal is answered 403 with a one-line reason (which host,
//     which rule) and reported as an Event; every connection let through is
//     reported once, when it ends, with the bytes each way and its duration.
//   - A sandbox can cost the proxy only so much: a request's head is bounded
//     in size and in time, connections in number, and connections end when
//     no byte has passed for a while.
package egress

import (
	"cmp"
	"context"
	"net"
	"time"

	"github.com/skilld/skilld"
)

// Event is one connection or refusal, for the task's log and metrics.
type Event struct {
	// Host is the host the client asked for: a name (lower-case, no
	// trailing dot) or an address; "" when no request could be read.
	Host string
	Port int
	// IP is the address connected to, or the one that got a name refused.
	IP string
	// Method is CONNECT or the HTTP method of a plain request.
	Method string
	// Allowed says the allowlist let the connection through (it may still
	// have failed to connect: see Reason).
	Allowed bool
	// Entry is the allowlist entry that let it through.
	Entry string
	// Status is what the proxy answered: 200 for an opened tunnel, the
	// destination's status for a plain request, else the proxy's own.
	Status int
	// Reason says why the connection was refused, failed or was cut (for
	// idleness); "" for one that ran its course.
	Reason string
	// BytesUp and BytesDown count the bytes sent to the destination and
	// received from it.
	BytesUp, BytesDown int64
	// Duration runs from accepting the client's connection to its end.
	Duration time.Duration
}

// Defaults of Config's limits.
const (
	DefaultMaxConns       = 64
	DefaultMaxHeaderBytes = 64 << 10
	DefaultHeaderTimeout  = 10 * time.Second
	DefaultDialTimeout    = 10 * time.Second
	DefaultIdleTimeout    = 2 * time.Minute
)

// maxResponseHeaderBytes bounds the head of a destination's answer to a
// plain request: an allowed server is still not trusted with the proxy's
// memory.
const maxResponseHeaderBytes = 1 << 20

// Config is a proxy's allowlist, its hooks and its limits. A zero limit
// takes its default; a negative one is EINVALID.
type Config struct {
	// Allow is what the task may reach; the zero Allowlist refuses
	// everything.
	Allow Allowlist
	// Resolve looks a name up, outside the sandbox. It gets the name
	// lower-case without a trailing dot; the default asks
	// net.DefaultResolver for it as a fully qualified name (with the dot),
	// so that no search domain of the host's resolv.conf applies.
	Resolve func(ctx context.Context, host string) ([]net.IP, error)
	// Dial connects to an address the proxy checked, always "IP:port" and
	// never a name. The default is a net.Dialer; tests send it elsewhere.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// OnEvent hears of every connection when it ends and of every refusal.
	// It is called from the connections' goroutines, several at once, and
	// never after Close has returned.
	OnEvent func(Event)
	// MaxConns bounds the client connections served at once (default 64);
	// one more is answered 503. Another MaxConns may wait for that answer;
	// past those, a connection is closed unanswered.
	MaxConns int
	// MaxHeaderBytes bounds a request's head: request line and headers
	// (default 64 KiB; past it, 431).
	MaxHeaderBytes int
	// HeaderTimeout is how long a client has to send a request's head, and
	// to take the proxy's own answers (default 10 s).
	HeaderTimeout time.Duration
	// DialTimeout bounds resolving a name and connecting to it, together
	// (default 10 s).
	DialTimeout time.Duration
	// IdleTimeout ends a tunnel or a plain request through which no byte
	// has passed, either way, for this long (default 2 min): a client's
	// pool of idle connections should not hold the proxy's slots forever.
	IdleTimeout time.Duration
}

// withDefaults fills in what cfg leaves zero, and refuses negative limits.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.MaxConns < 0 || cfg.MaxHeaderBytes < 0 || cfg.HeaderTimeout < 0 || cfg.DialTimeout < 0 || cfg.IdleTimeout < 0 {
		return Config{}, skilld.Errorf(skilld.EINVALID, "egress proxy: limits cannot be negative")
	}
	cfg.MaxConns = cmp.Or(cfg.MaxConns, DefaultMaxConns)
	cfg.MaxHeaderBytes = cmp.Or(cfg.MaxHeaderBytes, DefaultMaxHeaderBytes)
	cfg.HeaderTimeout = cmp.Or(cfg.HeaderTimeout, DefaultHeaderTimeout)
	cfg.DialTimeout = cmp.Or(cfg.DialTimeout, DefaultDialTimeout)
	cfg.IdleTimeout = cmp.Or(cfg.IdleTimeout, DefaultIdleTimeout)
	if cfg.Resolve == nil {
		cfg.Resolve = func(ctx context.Context, host string) ([]net.IP, error) {
			return net.DefaultResolver.LookupIP(ctx, "ip", host+".")
		}
	}
	if cfg.Dial == nil {
		d := &net.Dialer{Timeout: cfg.DialTimeout}
		cfg.Dial = d.DialContext
	}
	if cfg.OnEvent == nil {
		cfg.OnEvent = func(Event) {}
	}
	return cfg, nil
}
