package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/httpapi"
	"github.com/skilld/skilld/internal/streamlimit"
)

// TestEventStreamLimits: a token gets its streams and then 429, the server
// its total and then 503, both with Retry-After and the error body; closing
// the limiter (the server stopping) ends every open stream at once with a
// retry field and a "shutdown" event whose data is an ErrorObject, and
// refuses new streams with 503.
func TestEventStreamLimits(t *testing.T) {
	e := newEnv(t, firstDriver(t))
	task := e.slowTask(t)
	lim := streamlimit.New(streamlimit.Config{What: "event streams", PerToken: 2, Total: 3})
	e.serve(&httpapi.Server{Streams: lim})
	path := "/v1/workspaces/default/tasks/" + task["id"].(string) + "/events"
	viewer, member := e.token("default", "v", "viewer"), e.token("default", "m", "member")

	type stream struct {
		req  *http.Request
		resp *http.Response
	}
	open := func(token string) stream {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		t.Cleanup(cancel)
		req, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := e.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		if resp.StatusCode != 200 {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("stream %d: %s", resp.StatusCode, b)
		}
		return stream{req, resp}
	}
	refused := func(token string, status int, code string) {
		t.Helper()
		r := e.request("GET", path, token, nil)
		if r.status != status || r.errorCode(t) != code || r.header.Get("Retry-After") != "5" {
			t.Errorf("stream over the limit: %d %s, Retry-After %q, want %d %s", r.status, r.body, r.header.Get("Retry-After"), status, code)
		}
	}
	streams := []stream{open(e.admin), open(e.admin)}
	refused(e.admin, http.StatusTooManyRequests, skilld.ERATELIMITED)
	streams = append(streams, open(viewer))
	refused(member, http.StatusServiceUnavailable, skilld.EUNAVAILABLE)
	// The JSON log is one answer, not a stream: not limited.
	e.must(200, "GET", path+"?format=json", member, nil)

	lim.Close()
	for _, s := range streams {
		data, err := io.ReadAll(s.resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		e.checkContract(s.req, nil, s.resp, data)
		events := parseSSE(data)
		last := events[len(events)-1]
		if last.name != httpapi.ShutdownEvent || !strings.Contains(last.data, `"code":"unavailable"`) || !strings.Contains(string(data), "retry: 5000\n") {
			t.Errorf("a stream ended without the shutdown event:\n%s", clip(data))
		}
	}
	// A handler gives its place back as it returns, just after the
	// stream's last byte.
	for deadline := time.Now().Add(5 * time.Second); lim.Open() != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d streams still held after they ended", lim.Open())
		}
	}
	refused(viewer, http.StatusServiceUnavailable, skilld.EUNAVAILABLE)
}
