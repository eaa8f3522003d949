package s3blob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/skilld/skilld"
)

// flakyProxy forwards to the test server, but can answer 503 to the next
// few requests and cut the next few GET bodies partway, to stand in for an
// overloaded or flaky S3 endpoint.
type flakyProxy struct {
	unavailable atomic.Int32 // how many more requests get a 503
	cutGets     atomic.Int32 // how many more GET bodies to cut
	requests    atomic.Int32
	mu          sync.Mutex
	ranges      []string // Range headers of GET requests
}

func (p *flakyProxy) handler(target *url.URL) http.Handler {
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = r.In.Host // the client signed the Host it connected to
		},
		ModifyResponse: func(resp *http.Response) error {
			if resp.Request.Method == http.MethodGet && resp.StatusCode == http.StatusOK && p.cutGets.Add(-1) >= 0 {
				resp.Body = &cutBody{ReadCloser: resp.Body, left: 256 << 10}
			}
			return nil
		},
		ErrorLog: log.New(io.Discard, "", 0), // the aborted copies are intended
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.requests.Add(1)
		if r.Method == http.MethodGet && r.URL.Query().Get("list-type") == "" {
			p.mu.Lock()
			p.ranges = append(p.ranges, r.Header.Get("Range"))
			p.mu.Unlock()
		}
		if p.unavailable.Add(-1) >= 0 {
			http.Error(w, "try again", http.StatusServiceUnavailable)
			return
		}
		rp.ServeHTTP(w, r)
	})
}

// cutBody fails after left bytes, which makes the proxy abort the response
// mid-body, as a dropped connection would.
type cutBody struct {
	io.ReadCloser
	left int
}

func (c *cutBody) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, errors.New("cut")
	}
	if len(p) > c.left {
		p = p[:c.left]
	}
	n, err := c.ReadCloser.Read(p)
	c.left -= n
	return n, err
}

// startProxyLater returns an address that refuses connections until, after
// delay, a flakyProxy starts listening on it; stop closes the proxy, after
// which the address refuses connections again.
func startProxyLater(t *testing.T, delay time.Duration) (addr string, p *flakyProxy, stop func()) {
	srv := server.Require(t)
	target, err := url.Parse(srv.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr = l.Addr().String()
	l.Close() // refuse until the proxy takes the port over
	p = &flakyProxy{}
	hs := &http.Server{Handler: p.handler(target)}
	started := make(chan struct{})
	go func() {
		defer close(started)
		time.Sleep(delay)
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Errorf("proxy listen on %s: %v", addr, err)
			return
		}
		go hs.Serve(l)
	}()
	stop = sync.OnceFunc(func() { <-started; hs.Close() })
	t.Cleanup(stop)
	return addr, p, stop
}

// TestRetryThroughOutages: New, Put and Open succeed through refused
// connections (the first 300 ms), 503 answers, and a download cut short,
// which Open's reader resumes with a range request.
func TestRetryThroughOutages(t *testing.T) {
	addr, proxy, _ := startProxyLater(t, 300*time.Millisecond)
	cfg := testConfig(t)
	cfg.Endpoint = "http://" + addr
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// New itself retries until the proxy listens.
	s := newStore(t, cfg)
	content := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB

	proxy.unavailable.Store(2)
	info, err := s.Put(ctx, bytes.NewReader(content))
	if err != nil {
		t.Fatalf("Put through two 503s: %v", err)
	}
	if n := proxy.unavailable.Load(); n >= 0 {
		t.Fatalf("the proxy still had %d 503s to give; the test did not exercise retries", n+1)
	}

	proxy.unavailable.Store(2)
	proxy.cutGets.Store(1)
	proxy.mu.Lock()
	proxy.ranges = nil
	proxy.mu.Unlock()
	rc, err := s.Open(ctx, info.Digest)
	if err != nil {
		t.Fatalf("Open through two 503s: %v", err)
	}
	got, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || !bytes.Equal(got, content) {
		t.Fatalf("reading through a cut connection: %d bytes, %v", len(got), err)
	}
	proxy.mu.Lock()
	ranges := slices.Clone(proxy.ranges)
	proxy.mu.Unlock()
	// The proxy cuts after 256 KiB, but the server's write buffer holding
	// the last bytes may be dropped with the connection: the resume starts
	// where the client's bytes stopped, at or a little before the cut (the
	// byte-for-byte comparison above checks it starts at the right place).
	resumed := false
	for _, r := range ranges {
		var from int
		if _, err := fmt.Sscanf(r, "bytes=%d-", &from); err == nil && from > 0 && from <= 256<<10 {
			resumed = true
		}
	}
	if !resumed {
		t.Fatalf("GET Range headers %q: the cut download was not resumed from where it stopped (at most byte 262144)", ranges)
	}
}

// TestDeadEndpointIsUnavailable: once the endpoint stops answering, every
// call gives up when its context ends (or, without a deadline, after
// RetryLimit) with EUNAVAILABLE naming the endpoint, and leaves nothing
// behind.
func TestDeadEndpointIsUnavailable(t *testing.T) {
	addr, _, stop := startProxyLater(t, 0)
	cfg := testConfig(t)
	cfg.Endpoint = "http://" + addr
	cfg.RetryLimit = 300 * time.Millisecond
	s := newStore(t, cfg)
	info, err := s.Put(context.Background(), strings.NewReader("stored before the outage"))
	if err != nil {
		t.Fatal(err)
	}
	stop()

	short := func() context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
		t.Cleanup(cancel)
		return ctx
	}
	_, err = s.Stat(short(), info.Digest)
	checkUnavailable(t, "Stat", err, addr, context.DeadlineExceeded)
	_, err = s.Put(short(), strings.NewReader("new content"))
	checkUnavailable(t, "Put", err, addr, context.DeadlineExceeded)
	if left, _ := filepath.Glob(filepath.Join(cfg.TempDir, "*")); len(left) != 0 {
		t.Fatalf("failed Put left temp files: %v", left)
	}
	_, err = s.Open(short(), info.Digest)
	checkUnavailable(t, "Open", err, addr, context.DeadlineExceeded)
	for _, err = range s.List(short(), "") {
	}
	checkUnavailable(t, "List", err, addr, context.DeadlineExceeded)
	// No deadline: RetryLimit ends it, and the cause is the refusal.
	err = s.Delete(context.Background(), info.Digest)
	checkUnavailable(t, "Delete without a deadline", err, addr, syscall.ECONNREFUSED)
	_, err = New(short(), cfg)
	checkUnavailable(t, "New", err, addr, context.DeadlineExceeded)
}

func checkUnavailable(t *testing.T, what string, err error, endpoint string, cause error) {
	t.Helper()
	t.Logf("%s: %v", what, err)
	if skilld.ErrorCode(err) != skilld.EUNAVAILABLE || !strings.Contains(err.Error(), endpoint) {
		t.Fatalf("%s against a dead endpoint: %v (code %s), want EUNAVAILABLE naming %s", what, err, skilld.ErrorCode(err), endpoint)
	}
	if !errors.Is(err, cause) {
		t.Fatalf("%s: %v does not wrap %v", what, err, cause)
	}
}
