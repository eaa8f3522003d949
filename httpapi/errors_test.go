package httpapi_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/skilld/skilld/blob"
	"github.com/skilld/skilld/blob/fsblob"
	"github.com/skilld/skilld/httpapi"
	"github.com/skilld/skilld/service"
)

// failingBlobs fails every read with an untyped error whose text must
// never reach a client.
type failingBlobs struct{ blob.Store }

func (failingBlobs) Open(context.Context, string) (io.ReadCloser, error) {
	return nil, errors.New("disk on fire at /var/secret/blobs")
}

// TestInternalErrors: an untyped error is a 500 with a generic message and
// the request id; the log has the real error, the client does not.
func TestInternalErrors(t *testing.T) {
	e := newEnv(t, firstDriver(t))
	m := e.token("default", "m", "member")
	sk := e.must(201, "POST", "/v1/workspaces/default/skills", m, map[string]any{"files": map[string]string{"SKILL.md": skillMD("a", "A.")}})

	fs, _ := fsblob.New(e.blobDir)
	svc := service.New(e.db, failingBlobs{fs}, nil, service.Config{})
	logs := &lockedWriter{w: &strings.Builder{}}
	srv := httptest.NewServer((&httpapi.Server{Service: svc, Logger: slog.New(slog.NewTextHandler(logs, nil))}).Handler())
	defer srv.Close()
	e.srv = srv
	r := e.request("GET", "/v1/workspaces/default/skills/"+sk["id"].(string)+"/files/SKILL.md", m, nil)
	id := r.header.Get("X-Request-Id")
	if r.status != 500 || r.errorCode(t) != "internal" || strings.Contains(string(r.body), "fire") || !strings.Contains(r.errorMessage(t), id) {
		t.Errorf("internal error: %d %s", r.status, r.body)
	}
	if !strings.Contains(logs.String(), "disk on fire") || !strings.Contains(logs.String(), id) {
		t.Errorf("the log lacks the real error: %s", logs.String())
	}
}

// TestPanicRecovery: a panicking handler answers 500 with the JSON error
// body and the panic is logged; the server keeps serving.
func TestPanicRecovery(t *testing.T) {
	logs := &lockedWriter{w: &strings.Builder{}}
	// A server without a service panics on its first call to it.
	api := &httpapi.Server{Logger: slog.New(slog.NewTextHandler(logs, nil))}
	srv := httptest.NewServer(api.Handler())
	defer srv.Close()
	e := &testEnv{t: t, srv: srv}
	for range 2 {
		r := e.request("GET", "/v1/workspaces", "skd_whatever", nil)
		if r.status != 500 || r.errorCode(t) != "internal" {
			t.Errorf("panic: %d %s", r.status, r.body)
		}
	}
	if out := logs.String(); !strings.Contains(out, "msg=panic") || !strings.Contains(out, "stack=") || !strings.Contains(out, "status=500") {
		t.Errorf("log: %s", out)
	}
}

// TestRateLimited: GitHub's rate limit becomes 429 with Retry-After.
func TestRateLimited(t *testing.T) {
	e := newEnv(t, firstDriver(t))
	m := e.token("default", "m", "member")
	r := e.request("POST", "/v1/workspaces/default/skills/import", m, map[string]any{"github_url": "https://github.com/o/rate-limited"})
	if r.status != 429 || r.errorCode(t) != "rate_limited" || r.header.Get("Retry-After") != "42" {
		t.Errorf("rate limited: %d %v %s", r.status, r.header, r.body)
	}
}

// TestRequestLog: one line per request with its route, status and duration.
func TestRequestLog(t *testing.T) {
	e := newEnv(t, firstDriver(t))
	e.request("GET", "/v1/workspaces", e.admin, nil)
	out := e.logs.String()
	for _, want := range []string{"msg=request", `route="GET /v1/workspaces"`, "status=200", "duration=", "request_id="} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s: %s", want, out)
		}
	}
	if strings.Contains(out, e.admin) {
		t.Error("the log holds a token")
	}
}
