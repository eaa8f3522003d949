package egress

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/skilld/skilld"
)

// TestConnectionCap: past MaxConns, a connection is told 503 (and past as
// many more waiting, closed unanswered); a slot freed serves the next.
func TestConnectionCap(t *testing.T) {
	addr := tcpServer(t, echoConn)
	h := startProxy(t, Config{Allow: allow(t, addr), MaxConns: 2})
	var open []net.Conn
	for range 2 {
		c := h.dial(t)
		br := connect(t, c, addr)
		io.WriteString(c, "ping")
		if got, _ := io.ReadAll(io.LimitReader(br, 4)); string(got) != "ping" {
			t.Fatalf("echo %q", got)
		}
		open = append(open, c)
	}
	resp, body := h.ask(t, "CONNECT "+addr+" HTTP/1.1\r\n\r\n")
	if resp.StatusCode != 503 {
		t.Fatalf("third: %s %s", resp.Status, body)
	}
	contains(t, "answer", body, "limit of 2 connections")
	if e := h.event(t); e.Status != 503 || e.Allowed || e.Host != "127.0.0.1" || e.Method != "CONNECT" {
		t.Errorf("event %+v", e)
	}

	// Two connections waiting for their 503 fill the spare slots; the
	// next is closed unanswered.
	idle1, idle2 := h.dial(t), h.dial(t)
	third := h.dial(t)
	if n, err := third.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Errorf("read %d, %v from a connection past every slot", n, err)
	}
	if e := h.event(t); e.Status != 503 || !strings.Contains(e.Reason, "closed unanswered") {
		t.Errorf("event %+v", e)
	}
	idle1.Close()
	idle2.Close()

	open[0].Close()
	if e := h.event(t); !e.Allowed || e.BytesUp != 4 || e.BytesDown != 4 {
		t.Errorf("event %+v", e)
	}
	c := h.dial(t)
	connect(t, c, addr)
}

// TestHeaderLimits: a head too large is 431, a head too slow 408.
func TestHeaderLimits(t *testing.T) {
	// A generous timeout for the heads that are sent whole, so a loaded
	// machine cannot turn them into 408s; a short one for the slow head.
	h := startProxy(t, Config{Allow: allow(t, "api.example.test"), MaxHeaderBytes: 4096, HeaderTimeout: time.Minute})
	resp, body := h.ask(t, "GET http://api.example.test/ HTTP/1.1\r\nX-Big: "+strings.Repeat("a", 8192)+"\r\n\r\n")
	if resp.StatusCode != 431 {
		t.Errorf("%s %s", resp.Status, body)
	}
	if e := h.event(t); e.Status != 431 || e.Allowed || len(e.Reason) > 600 {
		t.Errorf("event %+v", e)
	}
	resp, body = h.ask(t, "GET /"+strings.Repeat("a", 3000)+" HTTP/1.1\r\n\r\n")
	if resp.StatusCode != 400 || len(body) > 600 {
		t.Errorf("%s %d bytes: %.100s", resp.Status, len(body), body)
	}
	if e := h.event(t); e.Status != 400 || len(e.Reason) > 600 || !strings.HasSuffix(e.Reason, "…") {
		t.Errorf("event %+v", e)
	}
	h = startProxy(t, Config{Allow: allow(t, "api.example.test"), MaxHeaderBytes: 4096, HeaderTimeout: 200 * time.Millisecond})
	resp, body = h.ask(t, "GET http://api.exa")
	if resp.StatusCode != 408 {
		t.Errorf("%s %s", resp.Status, body)
	}
	if e := h.event(t); e.Status != 408 {
		t.Errorf("event %+v", e)
	}
}

// TestIdleTimeout: a tunnel lives while bytes pass, either way, and ends
// after IdleTimeout without any.
func TestIdleTimeout(t *testing.T) {
	addr := tcpServer(t, echoConn)
	// Bytes every 100 ms keep a tunnel of a 2 s idle timeout alive, with
	// room for a loaded machine.
	h := startProxy(t, Config{Allow: allow(t, addr), IdleTimeout: 2 * time.Second})
	c := h.dial(t)
	br := connect(t, c, addr)
	for range 6 {
		io.WriteString(c, "a")
		if b, err := br.ReadByte(); err != nil || b != 'a' {
			t.Fatalf("echo: %q %v", b, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := br.ReadByte(); err == nil {
		t.Fatal("the tunnel outlived its idle timeout")
	}
	e := h.event(t)
	if e.BytesUp != 6 || e.BytesDown != 6 || e.Status != 200 {
		t.Errorf("event %+v", e)
	}
	contains(t, "reason", e.Reason, "without a byte either way")
}

// TestClose: Close ends open tunnels and Serve, reports them before it
// returns, and a closed proxy serves nothing more.
func TestClose(t *testing.T) {
	addr := tcpServer(t, echoConn)
	h := startProxy(t, Config{Allow: allow(t, addr)})
	c := h.dial(t)
	br := connect(t, c, addr)
	h.proxy.Close()
	select {
	case e := <-h.events:
		if e.Status != 200 || !e.Allowed {
			t.Errorf("event %+v", e)
		}
	default:
		t.Error("no event by the time Close returned")
	}
	if _, err := br.ReadByte(); err == nil {
		t.Error("the tunnel outlived Close")
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	defer ln.Close()
	if err := h.proxy.Serve(ln); skilld.ErrorCode(err) != skilld.EUNAVAILABLE {
		t.Errorf("Serve after Close: %v", err)
	}
}

func TestNewRefusesNegativeLimits(t *testing.T) {
	for _, cfg := range []Config{{MaxConns: -1}, {IdleTimeout: -time.Second}, {MaxHeaderBytes: -1}} {
		if _, err := New(cfg); skilld.ErrorCode(err) != skilld.EINVALID {
			t.Errorf("%+v: %v", cfg, err)
		}
	}
}
