package storetest

import (
	"errors"
	"net"
	"net/url"
	"sync"
	"testing"
)

// Outage is a TCP proxy in front of a real PostgreSQL server that a test
// can cut and restore: a database outage without stopping the shared
// server. While cut, new connections are refused and open ones are broken.
type Outage struct {
	t      testing.TB
	target string
	addr   string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]bool
	// stalled, when not nil, holds every byte until it is closed: a
	// server that is there but does not answer (SIGSTOP).
	stalled chan struct{}
}

// Stall keeps connections open but forwards nothing, either way, until
// Resume: a database that hangs rather than goes away.
func (o *Outage) Stall() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.stalled == nil {
		o.stalled = make(chan struct{})
	}
}

// Resume forwards again what a Stall held.
func (o *Outage) Resume() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.stalled != nil {
		close(o.stalled)
		o.stalled = nil
	}
}

// hold waits while the proxy is stalled.
func (o *Outage) hold() {
	o.mu.Lock()
	ch := o.stalled
	o.mu.Unlock()
	if ch != nil {
		<-ch
	}
}

// PostgresOutage returns a URL of a fresh schema (as FreshPostgresURL)
// that goes through an Outage proxy, and the proxy. The test is skipped
// without PostgreSQL, as OpenPostgres is.
func PostgresOutage(t testing.TB) (string, *Outage) {
	t.Helper()
	u, err := url.Parse(FreshPostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	o := &Outage{t: t, target: u.Host, conns: map[net.Conn]bool{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o.addr = ln.Addr().String()
	o.serve(ln)
	t.Cleanup(o.Cut)
	t.Cleanup(o.Resume)
	u.Host = o.addr
	return u.String(), o
}

// Cut refuses new connections and breaks open ones.
func (o *Outage) Cut() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ln != nil {
		o.ln.Close()
		o.ln = nil
	}
	for c := range o.conns {
		c.Close()
	}
	clear(o.conns)
}

// Restore accepts connections again, on the same address.
func (o *Outage) Restore() {
	o.t.Helper()
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		o.t.Fatalf("restoring the proxy on %s: %v", o.addr, err)
	}
	o.serve(ln)
}

func (o *Outage) serve(ln net.Listener) {
	o.mu.Lock()
	o.ln = ln
	o.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if err != nil {
				continue
			}
			go o.pipe(c)
		}
	}()
}

func (o *Outage) pipe(c net.Conn) {
	up, err := net.Dial("tcp", o.target)
	if err != nil {
		c.Close()
		return
	}
	o.mu.Lock()
	if o.ln == nil { // cut while dialing
		o.mu.Unlock()
		c.Close()
		up.Close()
		return
	}
	o.conns[c], o.conns[up] = true, true
	o.mu.Unlock()
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				o.hold()
				if _, werr := dst.Write(buf[:n]); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		done <- struct{}{}
	}
	go cp(up, c)
	go cp(c, up)
	<-done
	c.Close()
	up.Close()
	o.mu.Lock()
	delete(o.conns, c)
	delete(o.conns, up)
	o.mu.Unlock()
}
