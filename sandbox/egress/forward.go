package egress

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
	"time"
)

// forward sends an admitted plain request to up and its answer back, one
// exchange per connection: the proxy asks the destination to close after
// answering and closes the client's connection after relaying it. Interim
// answers (100 Continue) are relayed as they come, while the request's
// body is still being sent.
func (p *Proxy) forward(c net.Conn, br *bufio.Reader, req *http.Request, up net.Conn, t target, ev *Event) {
	m := newMeter(up, p.cfg.IdleTimeout, func() { c.Close(); up.Close() })
	out := outgoing(req, t)
	sent := make(chan error, 1)
	go func() { sent <- out.Write(m) }()

	lr := &io.LimitedReader{R: m, N: maxResponseHeaderBytes}
	ubr := bufio.NewReader(lr)
	answered := false
	for {
		lr.N = maxResponseHeaderBytes
		resp, err := http.ReadResponse(ubr, out)
		if err != nil {
			reason := fmt.Sprintf("%s: no valid answer from %s: %v", t, ev.IP, err)
			if lr.N <= 0 {
				reason = fmt.Sprintf("%s: the answer's head from %s is larger than %d bytes", t, ev.IP, maxResponseHeaderBytes)
			}
			ev.Status, ev.Reason = http.StatusBadGateway, reason
			if !answered {
				c.SetWriteDeadline(time.Now().Add(p.cfg.HeaderTimeout))
				writeAnswer(c, http.StatusBadGateway, "egress: "+reason)
			}
			break
		}
		lr.N = math.MaxInt64
		if resp.StatusCode >= 100 && resp.StatusCode < 200 && resp.StatusCode != http.StatusSwitchingProtocols {
			answered = true
			if err := writeInterim(c, resp); err != nil {
				ev.Reason = fmt.Sprintf("%s: relaying an interim answer: %v", t, err)
				break
			}
			continue
		}
		ev.Status = resp.StatusCode
		if err := prepareAnswer(resp, req).Write(c); err != nil {
			ev.Reason = fmt.Sprintf("%s: relaying the answer: %v", t, err)
		}
		break
	}
	c.SetReadDeadline(time.Now()) // ends the sender, if the client is still sending a body
	up.Close()
	<-sent
	if m.stop() {
		ev.Reason = fmt.Sprintf("%s: closed after %s without a byte either way", t, p.cfg.IdleTimeout)
	}
	ev.BytesUp, ev.BytesDown = m.up.Load(), m.down.Load()
}

// prepareAnswer readies the destination's answer for the client: the proxy's
// own HTTP version, hop-by-hop headers out, and the connection closed after
// it. A client speaking HTTP/1.0 gets the body as is, to the connection's
// end, instead of chunked. It returns resp, for chaining.
func prepareAnswer(resp *http.Response, req *http.Request) *http.Response {
	resp.ProtoMajor, resp.ProtoMinor = 1, 1
	stripHopByHop(resp.Header)
	resp.Close = true
	if !req.ProtoAtLeast(1, 1) {
		resp.TransferEncoding = nil
	}
	return resp
}

// outgoing turns the client's request into the destination's: origin form,
// a Host of what was checked, hop-by-hop and Proxy-* headers out, and
// Connection: close.
func outgoing(req *http.Request, t target) *http.Request {
	stripHopByHop(req.Header)
	if _, ok := req.Header["User-Agent"]; !ok {
		req.Header["User-Agent"] = []string{""} // else Request.Write adds Go's own
	}
	host := t.host()
	if t.ip.Is6() {
		host = "[" + host + "]"
	}
	if t.port != 80 {
		host += ":" + strconv.Itoa(t.port)
	}
	req.Host, req.URL.Host, req.URL.User = host, host, nil
	req.Close = true
	return req
}

// stripHopByHop removes from h the headers that concern one connection,
// not the exchange (RFC 9110, section 7.6.1): those Connection names, the
// usual ones, and the Proxy-* ones, which concern this proxy (a client's
// proxy credentials go no further).
func stripHopByHop(h http.Header) {
	for _, v := range h.Values("Connection") {
		for f := range strings.SplitSeq(v, ",") {
			if f = textproto.TrimString(f); f != "" {
				h.Del(f)
			}
		}
	}
	for _, k := range []string{"Connection", "Keep-Alive", "Te", "Trailer", "Transfer-Encoding", "Upgrade"} {
		h.Del(k)
	}
	for k := range h {
		if len(k) >= 6 && strings.EqualFold(k[:6], "proxy-") {
			delete(h, k)
		}
	}
}

// writeInterim relays a 1xx answer.
func writeInterim(w io.Writer, resp *http.Response) error {
	stripHopByHop(resp.Header)
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %03d %s\r\n", resp.StatusCode, http.StatusText(resp.StatusCode))
	resp.Header.Write(&b)
	b.WriteString("\r\n")
	_, err := w.Write(b.Bytes())
	return err
}
