package egress

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestPlainHTTP: an absolute-form request to a listed address goes
// through with the connection's and the proxy's headers removed, the Host
// it was checked for, and an event when it ends.
func TestPlainHTTP(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(echo))
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	h := startProxy(t, Config{Allow: allow(t, addr)})

	resp, body := h.ask(t, "GET http://"+addr+"/path?q=1 HTTP/1.1\r\nHost: elsewhere.example\r\n"+
		"Proxy-Authorization: Basic c2VjcmV0\r\nProxy-Connection: keep-alive\r\nConnection: X-Secret, keep-alive\r\n"+
		"X-Secret: 1\r\nKeep-Alive: 300\r\nTe: trailers\r\nUpgrade: websocket\r\nX-Keep: yes\r\n\r\n")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s", resp.Status, body)
	}
	s := decode(t, body)
	if s.Method != "GET" || s.Path != "/path?q=1" || s.Host != addr || s.Header.Get("X-Keep") != "yes" {
		t.Errorf("server saw %+v", s)
	}
	for _, k := range []string{"Proxy-Authorization", "Proxy-Connection", "X-Secret", "Keep-Alive", "Te", "Upgrade", "User-Agent"} {
		if v, ok := s.Header[k]; ok {
			t.Errorf("server saw %s: %q", k, v)
		}
	}
	for _, k := range []string{"Keep-Alive", "Proxy-Authenticate"} {
		if v, ok := resp.Header[k]; ok {
			t.Errorf("client saw %s: %q", k, v)
		}
	}
	if !resp.Close || resp.Proto != "HTTP/1.1" {
		t.Errorf("answer %s, Connection: close %v", resp.Proto, resp.Close)
	}
	e := h.event(t)
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	if e.Host != "127.0.0.1" || e.Port != port || e.IP != "127.0.0.1" || e.Method != "GET" || !e.Allowed ||
		e.Entry != addr || e.Status != 200 || e.Reason != "" || e.BytesUp == 0 || e.BytesDown < int64(len(body)) || e.Duration <= 0 {
		t.Errorf("event %+v", e)
	}

	// A body, through a client that waits for 100 Continue: the interim
	// answer is relayed while the body is pending.
	payload := strings.Repeat("x", 1<<20)
	req, _ := http.NewRequest("POST", srv.URL+"/upload", strings.NewReader(payload))
	req.Header.Set("Expect", "100-continue")
	began := time.Now()
	r2, err := h.client(nil).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := io.ReadAll(r2.Body)
	r2.Body.Close()
	if s := decode(t, string(b2)); s.Method != "POST" || s.Body != payload {
		t.Errorf("POST: server saw %s with %d bytes", s.Method, len(s.Body))
	}
	if d := time.Since(began); d > 3*time.Second {
		t.Errorf("POST took %s: 100 Continue was not relayed", d)
	}
	if e := h.event(t); e.Method != "POST" || e.BytesUp < int64(len(payload)) || e.Status != 200 {
		t.Errorf("event %+v", e)
	}
}

// TestConnectTLS: a tunnel to a listed address carries TLS end to end.
func TestConnectTLS(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(echo))
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	h := startProxy(t, Config{Allow: allow(t, addr)})

	resp, err := h.client(roots(srv)).Get("https://" + addr + "/tls")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if s := decode(t, string(body)); s.Path != "/tls" {
		t.Errorf("server saw %+v", s)
	}
	e := h.event(t)
	if e.Method != "CONNECT" || e.Host != "127.0.0.1" || e.IP != "127.0.0.1" || !e.Allowed || e.Entry != addr ||
		e.Status != 200 || e.BytesUp == 0 || e.BytesDown <= int64(len(body)) || e.Reason != "" {
		t.Errorf("event %+v", e)
	}
}

// TestNameResolvedByProxy: a listed name is resolved by the proxy, once
// per connection, and the proxy dials the address it checked, never the
// name: the name path end to end, plain and through a tunnel.
func TestNameResolvedByProxy(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(echo))
	defer srv.Close()
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(echo))
	defer tlsSrv.Close()
	fake := &fakeNet{
		names: map[string][]string{"api.example.test": {"93.184.216.34"}},
		routes: map[string]string{
			"93.184.216.34:80":  srv.Listener.Addr().String(),
			"93.184.216.34:443": tlsSrv.Listener.Addr().String(),
		},
	}
	h := startProxy(t, Config{Allow: allow(t, "api.example.test"), Resolve: fake.resolve, Dial: fake.dial})

	resp, body := h.ask(t, "GET http://API.Example.Test./x HTTP/1.1\r\nHost: api.example.test\r\n\r\n")
	if resp.StatusCode != 200 {
		t.Fatalf("%s %s", resp.Status, body)
	}
	if s := decode(t, body); s.Host != "api.example.test" || s.Path != "/x" {
		t.Errorf("server saw %+v", s)
	}
	e := h.event(t)
	if e.Host != "api.example.test" || e.Port != 80 || e.IP != "93.184.216.34" || e.Entry != "api.example.test" || !e.Allowed {
		t.Errorf("event %+v", e)
	}

	tc := roots(tlsSrv)
	tc.ServerName = "example.com" // a name in httptest's certificate
	r2, err := h.client(tc).Get("https://api.example.test/y")
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := io.ReadAll(r2.Body)
	r2.Body.Close()
	if s := decode(t, string(b2)); s.Path != "/y" || s.Host != "api.example.test" {
		t.Errorf("server saw %+v", s)
	}
	if e := h.event(t); e.Method != "CONNECT" || e.Port != 443 || e.IP != "93.184.216.34" || e.Status != 200 {
		t.Errorf("event %+v", e)
	}
	resolved, dialed := fake.record()
	if strings.Join(resolved, " ") != "api.example.test api.example.test" ||
		strings.Join(dialed, " ") != "93.184.216.34:80 93.184.216.34:443" {
		t.Errorf("resolved %q, dialed %q", resolved, dialed)
	}
}

// TestRefusals: what is not on the list, names that lead to non-public
// addresses, addresses not listed, ports not listed, and requests that
// are not the proxy's two ways through.
func TestRefusals(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(echo))
	defer srv.Close()
	local := srv.Listener.Addr().String()
	fake := &fakeNet{
		names: map[string][]string{
			"api.example.test":    {"93.184.216.34"},
			"local.example.test":  {"127.0.0.1"},
			"mixed.example.test":  {"93.184.216.34", "10.0.0.1"},
			"mapped.example.test": {"::ffff:127.0.0.1"},
			"nat64.example.test":  {"64:ff9b::a9fe:a9fe"},
			"meta.example.test":   {"169.254.169.254"},
			"sub.example.org":     {"93.184.216.34"},
			"a.b.example.org":     {"93.184.216.34"},
		},
		routes: map[string]string{"93.184.216.34:80": local},
	}
	h := startProxy(t, Config{Resolve: fake.resolve, Dial: fake.dial, Allow: allow(t,
		"api.example.test", "*.example.org", "local.example.test", "mixed.example.test", "mapped.example.test",
		"nat64.example.test", "meta.example.test", "10.0.0.5")})
	for _, c := range []struct {
		req    string
		status int
		reason string
		host   string
		ip     string
	}{
		{"GET http://other.example.test/ HTTP/1.1", 403, "other.example.test is not on the task's allowlist", "other.example.test", ""},
		{"CONNECT local.example.test:443 HTTP/1.1", 403, "local.example.test resolves to 127.0.0.1, a loopback address", "local.example.test", "127.0.0.1"},
		{"CONNECT mixed.example.test:443 HTTP/1.1", 403, "resolves to 10.0.0.1, a private address", "mixed.example.test", "10.0.0.1"},
		{"CONNECT mapped.example.test:443 HTTP/1.1", 403, "resolves to 127.0.0.1, a loopback address", "mapped.example.test", "127.0.0.1"},
		{"CONNECT nat64.example.test:443 HTTP/1.1", 403, "a NAT64 form of a link-local address", "nat64.example.test", "64:ff9b::a9fe:a9fe"},
		{"GET http://meta.example.test/latest/meta-data/ HTTP/1.1", 403, "169.254.169.254, a link-local address", "meta.example.test", "169.254.169.254"},
		{"GET http://" + local + "/ HTTP/1.1", 403, "it does not name 127.0.0.1", "127.0.0.1", "127.0.0.1"},
		{"CONNECT [::ffff:127.0.0.1]:443 HTTP/1.1", 403, "does not name 127.0.0.1", "127.0.0.1", "127.0.0.1"},
		{"CONNECT [::1]:443 HTTP/1.1", 403, "does not name ::1", "::1", "::1"},
		{"CONNECT 10.0.0.5:22 HTTP/1.1", 403, `entry "10.0.0.5" allows ports 80 and 443 only`, "10.0.0.5", "10.0.0.5"},
		{"CONNECT api.example.test:22 HTTP/1.1", 403, `api.example.test:22 is refused: allowlist entry "api.example.test" allows ports 80 and 443 only`, "api.example.test", ""},
		{"CONNECT example.org:443 HTTP/1.1", 403, "example.org is not on", "example.org", ""},
		{"CONNECT evil-example.org:443 HTTP/1.1", 403, "evil-example.org is not on", "evil-example.org", ""},
		{"GET http://gone.example.org/ HTTP/1.1", 502, "cannot resolve gone.example.org", "gone.example.org", ""},
		{"GET http://2130706433/ HTTP/1.1", 400, "cannot end in a number", "", ""},
		{"GET / HTTP/1.1", 400, "addressed to the proxy itself", "", ""},
		{"OPTIONS * HTTP/1.1", 405, "addressed to the proxy itself", "", ""},
		{"GET https://api.example.test/ HTTP/1.1", 400, "CONNECT", "", ""},
		{"CONNECT api.example.test HTTP/1.1", 400, "give a port", "", ""},
		{"CONNECT /x HTTP/1.1", 400, "CONNECT takes host:port", "", ""},
		{"HELLO", 400, "malformed request", "", ""},
	} {
		resp, body := h.ask(t, c.req+"\r\nHost: x\r\n\r\n")
		if resp.StatusCode != c.status || !strings.HasPrefix(body, "egress: ") || strings.Count(body, "\n") != 1 {
			t.Errorf("%s: %s %q", c.req, resp.Status, body)
		}
		contains(t, c.req+": answer", body, c.reason)
		e := h.event(t)
		if e.Allowed != (c.status == 502) || e.Status != c.status || e.Host != c.host || e.IP != c.ip {
			t.Errorf("%s: event %+v", c.req, e)
		}
		contains(t, c.req+": event", e.Reason, c.reason)
	}
	if _, dialed := fake.record(); len(dialed) != 0 {
		t.Errorf("refused requests dialed %q", dialed)
	}

	// Wildcards: any name under the domain, at any depth.
	for _, host := range []string{"sub.example.org", "a.b.example.org"} {
		if resp, body := h.ask(t, "GET http://"+host+"/ HTTP/1.1\r\nHost: x\r\n\r\n"); resp.StatusCode != 200 {
			t.Errorf("%s: %s %s", host, resp.Status, body)
		}
		if e := h.event(t); !e.Allowed || e.Entry != "*.example.org" || e.Host != host {
			t.Errorf("%s: event %+v", host, e)
		}
	}

	// A refused request with a body still gets its answer.
	c := h.dial(t)
	go io.WriteString(c, "POST http://other.example.test/ HTTP/1.1\r\nHost: x\r\nContent-Length: 200000\r\n\r\n"+strings.Repeat("b", 200000))
	if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil || resp.StatusCode != 403 {
		t.Errorf("refused POST: %v %v", resp, err)
	}
	c.Close()
	if e := h.event(t); e.Method != "POST" || e.Status != 403 {
		t.Errorf("event %+v", e)
	}
}

// TestListedAddressBehindName: a name may lead to a non-public address
// when the list names that address itself, for the port asked.
func TestListedAddressBehindName(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(echo))
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	port := strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port)
	fake := &fakeNet{names: map[string][]string{"local.example.test": {"127.0.0.1"}}, routes: map[string]string{addr: addr}}
	h := startProxy(t, Config{Resolve: fake.resolve, Dial: fake.dial, Allow: allow(t, "local.example.test:"+port, addr)})
	if resp, body := h.ask(t, "GET http://local.example.test:"+port+"/ HTTP/1.1\r\nHost: x\r\n\r\n"); resp.StatusCode != 200 {
		t.Fatalf("%s %s", resp.Status, body)
	}
	if e := h.event(t); !e.Allowed || e.IP != "127.0.0.1" || e.Entry != "local.example.test:"+port {
		t.Errorf("event %+v", e)
	}
}

// TestDestinationFailures: an allowed destination that does not answer,
// or answers nonsense, is a 502 reported as allowed; of several addresses,
// the first that answers serves.
func TestDestinationFailures(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(echo))
	defer srv.Close()
	garbage := tcpServer(t, func(c net.Conn) { io.WriteString(c, "NOT HTTP\r\n\r\n") })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	fake := &fakeNet{
		names:  map[string][]string{"two.example.test": {"93.184.216.35", "93.184.216.34"}},
		routes: map[string]string{"93.184.216.34:80": srv.Listener.Addr().String(), garbage: garbage, closed: closed},
	}
	h := startProxy(t, Config{Resolve: fake.resolve, Dial: fake.dial, Allow: allow(t, garbage, closed, "two.example.test")})

	if resp, body := h.ask(t, "GET http://two.example.test/ HTTP/1.1\r\nHost: x\r\n\r\n"); resp.StatusCode != 200 {
		t.Errorf("%s %s", resp.Status, body)
	}
	if e := h.event(t); e.IP != "93.184.216.34" || e.Status != 200 {
		t.Errorf("event %+v", e)
	}
	if _, dialed := fake.record(); strings.Join(dialed, " ") != "93.184.216.35:80 93.184.216.34:80" {
		t.Errorf("dialed %q", dialed)
	}
	for _, c := range []struct{ req, reason string }{
		{"CONNECT " + closed + " HTTP/1.1", "cannot connect to 127.0.0.1"},
		{"GET http://" + garbage + "/ HTTP/1.1", "no valid answer from 127.0.0.1"},
	} {
		resp, body := h.ask(t, c.req+"\r\nHost: x\r\n\r\n")
		if resp.StatusCode != 502 {
			t.Errorf("%s: %s %s", c.req, resp.Status, body)
		}
		contains(t, c.req, body, c.reason)
		if e := h.event(t); !e.Allowed || e.Status != 502 || e.IP != "127.0.0.1" || !strings.Contains(e.Reason, c.reason) {
			t.Errorf("%s: event %+v", c.req, e)
		}
	}
}

// TestTunnelEvent: a tunnel's event counts the bytes each way exactly, and
// a client's half-close reaches the destination, which still answers.
func TestTunnelEvent(t *testing.T) {
	addr := tcpServer(t, func(c net.Conn) {
		got, _ := io.ReadAll(c) // to the client's half-close
		c.Write(bytes.Repeat([]byte{'d'}, 3*len(got)))
	})
	h := startProxy(t, Config{Allow: allow(t, addr)})
	c := h.dial(t)
	// The first bytes ride with the request's head, as a TLS client's
	// hello may.
	c.Write(append([]byte("CONNECT "+addr+" HTTP/1.1\r\n\r\n"), bytes.Repeat([]byte{'u'}, 400)...))
	br := bufio.NewReader(c)
	if resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect}); err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	c.Write(bytes.Repeat([]byte{'u'}, 600))
	c.CloseWrite()
	back, err := io.ReadAll(br)
	if err != nil || len(back) != 3000 {
		t.Fatalf("read %d bytes: %v", len(back), err)
	}
	e := h.event(t)
	if e.Duration <= 0 {
		t.Errorf("duration %s", e.Duration)
	}
	e.Duration = 0
	port, _ := strconv.Atoi(addr[strings.LastIndexByte(addr, ':')+1:])
	want := Event{Host: "127.0.0.1", Port: port, IP: "127.0.0.1", Method: "CONNECT", Allowed: true, Entry: addr, Status: 200, BytesUp: 1000, BytesDown: 3000}
	if e != want {
		t.Errorf("event\n %+v, want\n %+v", e, want)
	}
	h.quiet(t)
}

// TestPublicWeb: an agent that may use the web without naming hosts
// reaches any name on ports 80 and 443 whose addresses are public, and
// public addresses by number there; nothing non-public, no other port.
func TestPublicWeb(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(echo))
	defer srv.Close()
	fake := &fakeNet{
		names:  map[string][]string{"any.example.test": {"93.184.216.34"}, "inside.example.test": {"127.0.0.1"}},
		routes: map[string]string{"93.184.216.34:80": srv.Listener.Addr().String()},
	}
	h := startProxy(t, Config{Allow: PublicWeb(), Resolve: fake.resolve, Dial: fake.dial})
	if got := PublicWeb().Entries(); len(got) != 1 || got[0] != "*" {
		t.Errorf("Entries = %q", got)
	}
	for _, c := range []struct {
		req     string
		allowed bool
	}{
		{"GET http://any.example.test/x HTTP/1.1\r\nHost: any.example.test\r\n\r\n", true},
		{"GET http://93.184.216.34/x HTTP/1.1\r\nHost: 93.184.216.34\r\n\r\n", true},
		{"GET http://inside.example.test/x HTTP/1.1\r\nHost: inside.example.test\r\n\r\n", false},
		{"GET http://127.0.0.1:80/x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", false},
		{"GET http://10.1.2.3/x HTTP/1.1\r\nHost: 10.1.2.3\r\n\r\n", false},
		{"GET http://any.example.test:8080/x HTTP/1.1\r\nHost: any.example.test:8080\r\n\r\n", false},
	} {
		resp, body := h.ask(t, c.req)
		if e := h.event(t); e.Allowed != c.allowed || c.allowed != (resp.StatusCode == 200) {
			t.Errorf("%q: %s %s, event %+v", c.req, resp.Status, body, e)
		}
	}
}
