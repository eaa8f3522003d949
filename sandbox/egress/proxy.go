package egress

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/skilld/skilld"
)

// Proxy is one task's way out: an HTTP proxy that carries CONNECT tunnels
// and plain requests to what its allowlist names, and nowhere else.
type Proxy struct {
	cfg    Config
	ctx    context.Context // ends at Close: stops resolving and dialing
	cancel context.CancelFunc
	slots  chan struct{} // held by each connection being served
	spare  chan struct{} // held by each connection being told the proxy is full

	mu     sync.Mutex
	closed bool
	lns    map[net.Listener]struct{}
	conns  map[net.Conn]struct{} // clients' and destinations' connections, for Close
	wg     sync.WaitGroup        // one per client connection
}

// New makes a proxy; cfg's limits are checked (EINVALID) and defaulted.
func New(cfg Config) (*Proxy, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Proxy{
		cfg: cfg, ctx: ctx, cancel: cancel,
		slots: make(chan struct{}, cfg.MaxConns),
		spare: make(chan struct{}, cfg.MaxConns),
		lns:   make(map[net.Listener]struct{}),
		conns: make(map[net.Conn]struct{}),
	}, nil
}

// Serve answers the connections ln accepts. It returns nil when ln is
// closed or Close is called, at once EUNAVAILABLE when the proxy is
// already closed, and an error when ln fails otherwise (after retrying
// while the machine is out of descriptors). It does not wait for the
// connections it started; Close does.
func (p *Proxy) Serve(ln net.Listener) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return skilld.Errorf(skilld.EUNAVAILABLE, "egress proxy: closed")
	}
	p.lns[ln] = struct{}{}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.lns, ln)
		p.mu.Unlock()
	}()
	var pause time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			if p.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			if pause = backoff(err, pause); pause == 0 {
				return fmt.Errorf("egress proxy: %w", err)
			}
			select {
			case <-time.After(pause):
			case <-p.ctx.Done():
			}
			continue
		}
		pause = 0
		p.accept(c)
	}
}

// Close stops every Serve, closing its listener, and ends every open
// connection; it returns when their goroutines have, so no Event follows
// it. Config's Resolve and Dial must heed their context for that.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		p.cancel()
		for ln := range p.lns {
			ln.Close()
		}
		for c := range p.conns {
			c.Close()
		}
	}
	p.mu.Unlock()
	p.wg.Wait()
	return nil
}

// accept gives c a slot, or, when all are taken, one of the spare slots
// from which it is told so (503); with those taken too it is closed
// unanswered. Either way it is reported.
func (p *Proxy) accept(c net.Conn) {
	start := time.Now()
	if !p.keep(c, true) {
		c.Close()
		return
	}
	select {
	case p.slots <- struct{}{}:
		go p.serveConn(c, start, p.slots, false)
		return
	default:
	}
	select {
	case p.spare <- struct{}{}:
		go p.serveConn(c, start, p.spare, true)
	default:
		c.Close()
		p.cfg.OnEvent(Event{Status: http.StatusServiceUnavailable, Duration: time.Since(start),
			Reason: fmt.Sprintf("the proxy is serving its limit of %d connections, and as many are waiting to be told so: closed unanswered", p.cfg.MaxConns)})
		p.drop(c, true)
	}
}

// keep records c for Close; worker says c is a client's connection with a
// goroutine of its own. False when the proxy is closed.
func (p *Proxy) keep(c net.Conn, worker bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	if worker {
		p.wg.Add(1)
	}
	return true
}

// drop closes c and forgets it.
func (p *Proxy) drop(c net.Conn, worker bool) {
	c.Close()
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	if worker {
		p.wg.Done()
	}
}

// serveConn answers one client connection: one request, then a tunnel or
// one forwarded exchange. It gives its slot back before reporting, so
// that whoever hears of a connection's end may open another at once.
func (p *Proxy) serveConn(c net.Conn, start time.Time, slot chan struct{}, busy bool) {
	defer p.drop(c, true)
	ev, ok := p.exchange(c, start, busy)
	c.Close()
	<-slot
	if ok {
		ev.Duration = time.Since(start)
		p.cfg.OnEvent(ev)
	}
}

// way is how a request goes through.
type way int

const (
	viaConnect way = iota
	viaForward
)

// exchange reads the request and carries it; false when the client left
// without asking anything.
func (p *Proxy) exchange(c net.Conn, start time.Time, busy bool) (ev Event, ok bool) {
	deadline := start.Add(p.cfg.HeaderTimeout)
	c.SetReadDeadline(deadline)
	lr := &io.LimitedReader{R: c, N: int64(p.cfg.MaxHeaderBytes)}
	br := bufio.NewReader(lr)
	req, err := http.ReadRequest(br)
	if err != nil {
		r := &refusal{status: http.StatusBadRequest, reason: "malformed request: " + err.Error()}
		switch {
		case lr.N <= 0:
			r = &refusal{status: http.StatusRequestHeaderFieldsTooLarge, reason: fmt.Sprintf("the request's head is larger than %d bytes", p.cfg.MaxHeaderBytes)}
		case errors.Is(err, os.ErrDeadlineExceeded) || !time.Now().Before(deadline): // a partial line hides the timeout
			r = &refusal{status: http.StatusRequestTimeout, reason: fmt.Sprintf("no request within %s", p.cfg.HeaderTimeout)}
		case err == io.EOF:
			return ev, false
		}
		p.refuse(c, c, &ev, r)
		return ev, true
	}
	lr.N = math.MaxInt64
	c.SetReadDeadline(time.Time{})
	ev.Method = req.Method
	t, via, r := route(req)
	if r != nil {
		p.refuse(c, br, &ev, r)
		return ev, true
	}
	ev.Host, ev.Port = t.host(), t.port
	if busy {
		p.refuse(c, br, &ev, &refusal{status: http.StatusServiceUnavailable,
			reason: fmt.Sprintf("%s: the proxy is serving its limit of %d connections; try again when one ends", t, p.cfg.MaxConns)})
		return ev, true
	}
	up, r := p.open(t, &ev)
	if r != nil {
		p.refuse(c, br, &ev, r)
		return ev, true
	}
	defer p.drop(up, false)
	if via == viaConnect {
		p.tunnel(c, br, up, t, &ev)
	} else {
		p.forward(c, br, req, up, t, &ev)
	}
	return ev, true
}

// route says where a request goes and how, or why it goes nowhere.
func route(req *http.Request) (target, way, *refusal) {
	bad := func(status int, format string, args ...any) (target, way, *refusal) {
		return target{}, 0, &refusal{status: status, reason: fmt.Sprintf(format, args...)}
	}
	u := req.URL
	switch {
	case req.Method == http.MethodConnect:
		if u.Host == "" || u.Path != "" || u.RawQuery != "" || u.User != nil {
			return bad(http.StatusBadRequest, "CONNECT takes host:port, not %q", req.RequestURI)
		}
		t, err := parseTarget(u.Host, 0)
		if err != nil {
			return bad(http.StatusBadRequest, "%v", err)
		}
		return t, viaConnect, nil
	case u.IsAbs():
		if u.Scheme != "http" {
			return bad(http.StatusBadRequest, "the proxy forwards http:// URLs; for %s:// open a tunnel with CONNECT host:port (HTTPS_PROXY)", u.Scheme)
		}
		if u.Host == "" {
			return bad(http.StatusBadRequest, "%q names no host", req.RequestURI)
		}
		t, err := parseTarget(u.Host, 80)
		if err != nil {
			return bad(http.StatusBadRequest, "%v", err)
		}
		return t, viaForward, nil
	case req.RequestURI == "*":
		return bad(http.StatusMethodNotAllowed, "%s * is addressed to the proxy itself, which takes only CONNECT host:port and whole http:// URLs", req.Method)
	}
	return bad(http.StatusBadRequest, "%s %q is addressed to the proxy itself: send CONNECT host:port, or the whole URL (GET http://host/path)", req.Method, req.RequestURI)
}

// open admits t and connects to it, filling ev in.
func (p *Proxy) open(t target, ev *Event) (net.Conn, *refusal) {
	ctx, cancel := context.WithTimeout(p.ctx, p.cfg.DialTimeout)
	defer cancel()
	pl, r := p.admit(ctx, t)
	if r != nil {
		return nil, r
	}
	ev.Allowed, ev.Entry = true, pl.entry
	up, ip, err := p.dial(ctx, pl, t.port)
	ev.IP = ip.String()
	if err != nil {
		status := http.StatusBadGateway
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			status = http.StatusGatewayTimeout
		}
		return nil, &refusal{status: status, allowed: true, reason: fmt.Sprintf("%s: cannot connect to %s: %v", t, ip, err)}
	}
	if !p.keep(up, false) {
		up.Close()
		return nil, &refusal{status: http.StatusServiceUnavailable, allowed: true, reason: "the proxy is closing"}
	}
	return up, nil
}

// Lingering after a refusal: how long and how much of what the client is
// still sending (a request's body) to take, so that closing with unread
// bytes does not reset the connection before the client reads the answer.
const (
	lingerTime  = time.Second
	lingerBytes = 256 << 10
)

// maxReason bounds a refusal's reason, which may quote what the client
// sent (up to a whole request head).
const maxReason = 512

// refuse answers r to the client, records it in ev, and lingers.
func (p *Proxy) refuse(c net.Conn, in io.Reader, ev *Event, r *refusal) {
	if len(r.reason) > maxReason {
		r.reason = strings.ToValidUTF8(r.reason[:maxReason], "") + "…"
	}
	ev.Status, ev.Reason, ev.Allowed = r.status, r.reason, r.allowed
	if r.ip != "" {
		ev.IP = r.ip
	}
	c.SetWriteDeadline(time.Now().Add(p.cfg.HeaderTimeout))
	if writeAnswer(c, r.status, "egress: "+r.reason) != nil {
		return
	}
	if closeWrite(c) == nil {
		c.SetReadDeadline(time.Now().Add(lingerTime))
		io.Copy(io.Discard, io.LimitReader(in, lingerBytes))
	}
}

// writeAnswer writes the proxy's own answer: status and a one-line plain
// message.
func writeAnswer(w io.Writer, status int, msg string) error {
	msg = strings.NewReplacer("\r", " ", "\n", " ").Replace(msg) + "\n"
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\n", status, http.StatusText(status))
	if status == http.StatusMethodNotAllowed {
		b.WriteString("Allow: CONNECT\r\n")
	}
	fmt.Fprintf(&b, "Content-Type: text/plain; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(msg), msg)
	_, err := w.Write(b.Bytes())
	return err
}
