package storetest

import (
	"errors"
	"io"
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
	cp := func(dst, src net.Conn) { io.Copy(dst, src); done <- struct{}{} }
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
