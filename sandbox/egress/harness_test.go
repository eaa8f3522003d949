package egress

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// harness is a proxy serving a unix socket in a temporary folder, its
// events on a channel.
type harness struct {
	sock   string
	proxy  *Proxy
	events chan Event
}

func startProxy(t *testing.T, cfg Config) *harness {
	t.Helper()
	h := &harness{events: make(chan Event, 256)}
	cfg.OnEvent = func(e Event) { h.events <- e }
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.proxy = p
	h.sock = filepath.Join(t.TempDir(), "p.sock")
	ln, err := net.Listen("unix", h.sock)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- p.Serve(ln) }()
	t.Cleanup(func() {
		p.Close()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return h
}

func allow(t *testing.T, entries ...string) Allowlist {
	t.Helper()
	a, err := ParseAllowlist(entries)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// event waits for the proxy's next event.
func (h *harness) event(t *testing.T) Event {
	t.Helper()
	select {
	case e := <-h.events:
		return e
	case <-time.After(10 * time.Second):
		t.Fatal("no event")
		return Event{}
	}
}

// quiet checks that no event is waiting.
func (h *harness) quiet(t *testing.T) {
	t.Helper()
	select {
	case e := <-h.events:
		t.Errorf("unexpected event %+v", e)
	case <-time.After(50 * time.Millisecond):
	}
}

// dial opens a raw connection to the proxy's socket.
func (h *harness) dial(t *testing.T) *net.UnixConn {
	t.Helper()
	c, err := net.Dial("unix", h.sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(20 * time.Second))
	return c.(*net.UnixConn)
}

// client is an HTTP client whose proxy is the harness's socket.
func (h *harness) client(tc *tls.Config) *http.Client {
	return proxyClient("egress.invalid", func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", h.sock)
	}, tc)
}

func proxyClient(proxyHost string, dial func(context.Context) (net.Conn, error), tc *tls.Config) *http.Client {
	return &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{
		Proxy:                 http.ProxyURL(&url.URL{Scheme: "http", Host: proxyHost}),
		DialContext:           func(ctx context.Context, _, _ string) (net.Conn, error) { return dial(ctx) },
		TLSClientConfig:       tc,
		DisableKeepAlives:     true,
		ExpectContinueTimeout: 5 * time.Second,
	}}
}

// roots trusts a TLS test server's certificate.
func roots(srv *httptest.Server) *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	return &tls.Config{RootCAs: pool}
}

// ask sends a raw request on a new connection and reads the answer.
func (h *harness) ask(t *testing.T, raw string) (*http.Response, string) {
	t.Helper()
	c := h.dial(t)
	defer c.Close()
	go io.WriteString(c, raw)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%q: %v", raw, err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%q: %v", raw, err)
	}
	return resp, string(body)
}

// connect opens a tunnel on c to addr and returns the reader of what
// comes back after the 200.
func connect(t *testing.T, c net.Conn, addr string) *bufio.Reader {
	t.Helper()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", addr, addr)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("CONNECT %s: %s %s", addr, resp.Status, body)
	}
	return br
}

// seen is what the echo server received.
type seen struct {
	Method, Path, Host string
	Header             http.Header
	Body               string
}

func echo(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Keep-Alive", "timeout=5")
	w.Header().Set("Proxy-Authenticate", "Basic")
	json.NewEncoder(w).Encode(seen{Method: r.Method, Path: r.URL.RequestURI(), Host: r.Host, Header: r.Header, Body: string(body)})
}

func decode(t *testing.T, body string) seen {
	t.Helper()
	var s seen
	if err := json.Unmarshal([]byte(body), &s); err != nil {
		t.Fatalf("%v: %q", err, body)
	}
	return s
}

// tcpServer accepts connections on 127.0.0.1 and runs serve on each.
func tcpServer(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(20 * time.Second))
				serve(c)
			})
		}
	})
	return ln.Addr().String()
}

func echoConn(c net.Conn) { io.Copy(c, c) }

// fakeNet is a resolver with fixed answers and a dialer that sends the
// addresses it knows to local servers, recording both.
type fakeNet struct {
	names  map[string][]string
	routes map[string]string // "IP:port" → the test server's address

	mu       sync.Mutex
	resolved []string
	dialed   []string
}

func (f *fakeNet) resolve(ctx context.Context, host string) ([]net.IP, error) {
	f.mu.Lock()
	f.resolved = append(f.resolved, host)
	f.mu.Unlock()
	addrs, ok := f.names[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var ips []net.IP
	for _, a := range addrs {
		ips = append(ips, net.ParseIP(a))
	}
	return ips, nil
}

func (f *fakeNet) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	f.mu.Lock()
	f.dialed = append(f.dialed, addr)
	f.mu.Unlock()
	to, ok := f.routes[addr]
	if !ok {
		return nil, fmt.Errorf("%s is unreachable in this test", addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, to)
}

func (f *fakeNet) record() (resolved, dialed []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.resolved), slices.Clone(f.dialed)
}

func contains(t *testing.T, what, got, want string) {
	t.Helper()
	if !strings.Contains(got, want) {
		t.Errorf("%s %q, want it to hold %q", what, got, want)
	}
}
