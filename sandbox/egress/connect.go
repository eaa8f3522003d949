package egress

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// tunnel answers an admitted CONNECT with a 200 and then carries bytes
// both ways between the client and up until both sides are done, one of
// them fails, or the tunnel is idle for IdleTimeout. The bytes the client
// sent after its request's head (a TLS hello, say), already in br, go
// first.
func (p *Proxy) tunnel(c net.Conn, br *bufio.Reader, up net.Conn, t target, ev *Event) {
	c.SetWriteDeadline(time.Now().Add(p.cfg.HeaderTimeout))
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		ev.Reason = fmt.Sprintf("%s: the client left before the tunnel opened: %v", t, err)
		return
	}
	c.SetWriteDeadline(time.Time{})
	ev.Status = http.StatusOK
	m := newMeter(up, p.cfg.IdleTimeout, func() { c.Close(); up.Close() })
	relay(c, br, m)
	if m.stop() {
		ev.Reason = fmt.Sprintf("%s: closed after %s without a byte either way", t, p.cfg.IdleTimeout)
	}
	ev.BytesUp, ev.BytesDown = m.up.Load(), m.down.Load()
}
