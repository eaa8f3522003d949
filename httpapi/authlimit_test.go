package httpapi_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/skilld/skilld/httpapi"
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
