package httpapi_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skilld/skilld/httpapi"
	"github.com/skilld/skilld/internal/authlimit"
	"github.com/skilld/skilld/mcpserver"
	"github.com/skilld/skilld/web"
)

// TestFailedAuthLimit: after the limit of wrong tokens from one address,
// its further wrong tokens get 429 with Retry-After; a valid token the
// server has seen from that address still works, and another address is
// unaffected.
func TestFailedAuthLimit(t *testing.T) {
	e := newEnv(t, firstDriver(t))
	api := &httpapi.Server{Service: e.svc, Version: "test", Logger: slog.New(slog.DiscardHandler)}
	h := api.Handler()
	// The test's clients all connect from 127.0.0.1; a test header stands
	// for the peer address a real network would give.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.RemoteAddr = r.Header.Get("X-Test-Peer") + ":1234"
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	get := func(peer, token string) *http.Response {
		req, _ := http.NewRequestWithContext(t.Context(), "GET", srv.URL+"/v1/workspaces/default/skills", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("X-Test-Peer", peer)
		req.Header.Set("X-Forwarded-For", "192.0.2."+strconv.Itoa(len(token)%200)) // not believed
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	// The address's own client worked before the flood began.
	if resp := get("203.0.113.7", e.admin); resp.StatusCode != 200 {
		t.Fatalf("a valid token: %d", resp.StatusCode)
	}
	member := e.token("default", "m", "member")
	var limited int
	for i := range 30 {
		resp := get("203.0.113.7", "skd_wrong"+strconv.Itoa(i))
		switch {
		case i < httpapi.DefaultAuthFailuresPerAddress && resp.StatusCode != 401:
			t.Fatalf("wrong token %d: %d, want 401", i, resp.StatusCode)
		case i >= httpapi.DefaultAuthFailuresPerAddress:
			if resp.StatusCode != 429 {
				t.Fatalf("wrong token %d: %d, want 429", i, resp.StatusCode)
			}
			if n, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || n < 1 || n > 60 {
				t.Errorf("Retry-After %q", resp.Header.Get("Retry-After"))
			}
			limited++
		}
	}
	if limited != 30-httpapi.DefaultAuthFailuresPerAddress {
		t.Errorf("%d answers 429", limited)
	}
	if resp := get("203.0.113.7", e.admin); resp.StatusCode != 200 {
		t.Errorf("a valid token from the limited address: %d", resp.StatusCode)
	}
	// A token this server has not seen authenticate is not looked up
	// while its address is limited: that is what makes guessing free.
	if resp := get("203.0.113.7", member); resp.StatusCode != 429 {
		t.Errorf("an unseen valid token from the limited address: %d, want 429", resp.StatusCode)
	}
	if resp := get("198.51.100.9", member); resp.StatusCode != 200 {
		t.Errorf("a valid token from another address: %d", resp.StatusCode)
	}
	if resp := get("198.51.100.9", "skd_wrong"); resp.StatusCode != 401 {
		t.Errorf("another address: %d, want 401", resp.StatusCode)
	}
	r := e.request("GET", "/v1/workspaces/default/skills", "skd_wrong", nil)
	if r.status != 401 {
		t.Errorf("the environment's own server: %d", r.status)
	}
}

// TestFailedAuthLimitAcrossSurfaces: the API, /mcp and the web UI's
// sign-in share one limit, as serve wires them: failures through MCP and
// the sign-in form count toward the address's limit, and once it is
// reached every surface answers 429 with Retry-After, without a lookup.
func TestFailedAuthLimitAcrossSurfaces(t *testing.T) {
	e := newEnv(t, firstDriver(t))
	auth := authlimit.New(4, time.Minute)
	api := &httpapi.Server{Service: e.svc, Version: "test", Logger: slog.New(slog.DiscardHandler), AuthLimit: auth}
	api.Mounts = map[string]http.Handler{
		"/mcp":     mcpserver.HTTPHandler(e.svc, mcpserver.HTTPOptions{AuthLimit: auth}),
		web.Prefix: web.New(e.svc, web.Options{AuthLimit: auth, Logger: slog.New(slog.DiscardHandler)}),
	}
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	mcp := func(token string) *http.Response {
		req, _ := http.NewRequestWithContext(t.Context(), "POST", srv.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		return do(t, srv, req)
	}
	signIn := func(token string) *http.Response {
		form := url.Values{"token": {token}, "csrf": {"same"}}
		req, _ := http.NewRequestWithContext(t.Context(), "POST", srv.URL+web.Prefix+"login", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(&http.Cookie{Name: "skilld_login", Value: "same"})
		return do(t, srv, req)
	}
	apiGet := func(token string) *http.Response {
		req, _ := http.NewRequestWithContext(t.Context(), "GET", srv.URL+"/v1/workspaces/default/skills", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		return do(t, srv, req)
	}
	for i, resp := range []*http.Response{mcp("skd_wrong1"), mcp("skd_wrong2"), signIn("skd_wrong3"), signIn("skd_wrong4")} {
		if resp.StatusCode != 401 {
			t.Fatalf("wrong token %d: %d, want 401", i+1, resp.StatusCode)
		}
	}
	member := e.token("default", "m", "member")
	for name, resp := range map[string]*http.Response{"api": apiGet(member), "mcp": mcp("skd_wrong5"), "sign-in": signIn(member)} {
		if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" {
			t.Errorf("%s after the limit: %d, Retry-After %q; want 429 with one", name, resp.StatusCode, resp.Header.Get("Retry-After"))
		}
	}
}

func do(t *testing.T, srv *httptest.Server, req *http.Request) *http.Response {
	t.Helper()
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}
