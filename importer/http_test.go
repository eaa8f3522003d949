package importer_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/importer"
	"github.com/skilld/skilld/importer/githubtest"
)

const token = "ghp_TESTTOKEN0123456789"

func fetchWithToken(t *testing.T, f *fakeGitHub, rawURL string) error {
	t.Helper()
	src, err := importer.ParseGitHubURL(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = f.client(token).Fetch(context.Background(), src)
	if err != nil && strings.Contains(fmt.Sprintf("%v %+v %s", err, skilld.ErrorDetails(err), errors.Unwrap(err)), token) {
		t.Fatalf("the error leaks the token: %v", err)
	}
	return err
}

func TestTokenOnlyGoesToTheAPIHost(t *testing.T) {
	t.Parallel()
	f := newFakeGitHub(t)
	f.Archives["main"] = repoArchive(standardRepo()...)
	if err := fetchWithToken(t, f, "https://github.com/o/r"); err != nil {
		t.Fatal(err)
	}
	if len(f.APIAuth) != 2 || f.APIAuth[0] != "Bearer "+token || f.APIAuth[1] != "Bearer "+token {
		t.Fatalf("API host saw Authorization %q, want the token on both requests", f.APIAuth)
	}
	if len(f.CodeloadAuth) != 1 || f.CodeloadAuth[0] != "" {
		t.Fatalf("download host saw Authorization %q, want none", f.CodeloadAuth)
	}
	// A redirect that stays on the API host keeps the token.
	f.TarballHook = func(w http.ResponseWriter, r *http.Request, n int) bool {
		if n == 2 {
			http.Redirect(w, r, "/repos/o/r/tarball/main", http.StatusFound)
			return true
		}
		return false
	}
	if err := fetchWithToken(t, f, "https://github.com/o/r/tree/main"); err != nil {
		t.Fatal(err)
	}
	if got := f.APIAuth[2:]; len(got) != 2 || got[0] != got[1] || got[0] != "Bearer "+token {
		t.Fatalf("same-host redirect: Authorization %q", got)
	}
}

func TestHTTPErrorsMap(t *testing.T) {
	t.Parallel()
	reset := time.Now().Add(10 * time.Minute).Unix()
	cases := []struct {
		name   string
		status int
		header map[string]string
		code   string
		words  []string
	}{
		{"not found", 404, nil, skilld.ENOTFOUND, []string{"repository o/r not found or not visible with the configured token"}},
		{"bad token", 401, nil, skilld.EUNAUTHORIZED, []string{"GitHub rejected the configured token", "o/r"}},
		{"rate limit", 403, map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Limit": "60", "X-RateLimit-Reset": fmt.Sprint(reset)},
			skilld.ERATELIMITED, []string{"rate limit", time.Unix(reset, 0).UTC().Format(time.RFC3339)}},
		{"secondary limit", 403, map[string]string{"Retry-After": "60"}, skilld.ERATELIMITED, []string{"retry after 60 seconds"}},
		{"429", 429, map[string]string{"Retry-After": "5"}, skilld.ERATELIMITED, []string{"retry after 5 seconds"}},
		{"forbidden", 403, nil, skilld.EFORBIDDEN, []string{"refused access to o/r", "Resource not accessible"}},
		{"server error", 502, nil, skilld.EUNAVAILABLE, []string{"unavailable", "502", "o/r"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeGitHub(t)
			f.RepoHook = func(w http.ResponseWriter, r *http.Request, n int) bool {
				for k, v := range c.header {
					w.Header().Set(k, v)
				}
				writeJSON(w, c.status, map[string]any{"message": "Resource not accessible by personal access token"})
				return true
			}
			f.TarballHook = f.RepoHook
			err := fetchWithToken(t, f, "https://github.com/o/r")
			if c.code == skilld.EUNAVAILABLE {
				// The default branch falls back to main, and the archive
				// request fails on its own, after two retries each.
				if f.RepoCalls != 3 || f.TarballCalls != 3 {
					t.Fatalf("%d+%d requests, want 3+3", f.RepoCalls, f.TarballCalls)
				}
			} else if f.RepoCalls != 1 || f.TarballCalls != 0 {
				t.Fatalf("%d+%d requests, want 1+0 (no retries, no download)", f.RepoCalls, f.TarballCalls)
			}
			wantErr(t, err, c.code, nil, c.words...)
			if c.code == skilld.ERATELIMITED && len(skilld.ErrorDetails(err)) == 0 {
				t.Fatal("rate-limit error without details")
			}
		})
	}
}

func TestRetriesThenSucceeds(t *testing.T) {
	t.Parallel()
	f := newFakeGitHub(t)
	f.Archives["main"] = repoArchive(standardRepo()...)
	f.TarballHook = func(w http.ResponseWriter, r *http.Request, n int) bool {
		if n < 3 {
			w.WriteHeader(http.StatusInternalServerError)
			return true
		}
		return false
	}
	if err := fetchWithToken(t, f, "https://github.com/o/r/tree/main"); err != nil {
		t.Fatalf("500, 500, then 200: %v", err)
	}
	if f.TarballCalls != 3 {
		t.Fatalf("%d tarball requests, want 3", f.TarballCalls)
	}
}

func TestNetworkErrorsAreRedacted(t *testing.T) {
	t.Parallel()
	f := newFakeGitHub(t)
	f.Archives["main"] = repoArchive(standardRepo()...)
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	f.TarballHook = func(w http.ResponseWriter, r *http.Request, n int) bool {
		http.Redirect(w, r, deadURL+"/codeload/x?token=SHORTLIVED", http.StatusFound)
		return true
	}
	err := fetchWithToken(t, f, "https://github.com/o/r/tree/main")
	wantErr(t, err, skilld.EUNAVAILABLE, nil, "o/r")
	for e := error(err); e != nil; e = errors.Unwrap(e) {
		if strings.Contains(e.Error(), "SHORTLIVED") {
			t.Fatalf("error chain shows the download URL's token: %v", e)
		}
	}
	if f.TarballCalls != 3 {
		t.Fatalf("%d attempts, want 3", f.TarballCalls)
	}

	// A cancelled context stops the retries at once.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	src, _ := importer.ParseGitHubURL("https://github.com/o/r/tree/main")
	_, _, err = f.client("").Fetch(ctx, src)
	if !errors.Is(err, context.Canceled) || skilld.ErrorCode(err) != skilld.EUNAVAILABLE {
		t.Fatalf("cancelled: %v (%s)", err, skilld.ErrorCode(err))
	}
}

func TestArchiveSizeLimit(t *testing.T) {
	t.Parallel()
	const limit = 64 << 10
	noise := make([]byte, 3*limit)
	_, _ = rand.Read(noise)
	big := repoArchive(file{Name: "SKILL.md", Data: githubtest.SkillMD("r")}, file{Name: "noise.bin", Data: string(noise)})
	f := newFakeGitHub(t)
	f.Archives["main"] = big
	f.Archives["small"] = repoArchive(file{Name: "SKILL.md", Data: githubtest.SkillMD("r")})
	client := func() *importer.GitHub {
		g := f.client("")
		g.MaxArchiveSize = limit
		return g
	}
	get := func(ref string) error {
		src, _ := importer.ParseGitHubURL("https://github.com/o/r/tree/" + ref)
		_, _, err := client().Fetch(context.Background(), src)
		return err
	}

	// Honest Content-Length: refused before the body is read. The server
	// sends a little and then waits, so reading would hang the test.
	f.CodeloadHook = func(w http.ResponseWriter, r *http.Request, archive []byte) bool {
		w.Header().Set("Content-Length", fmt.Sprint(len(archive)))
		_, _ = w.Write(archive[:1024])
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
		return true
	}
	start := time.Now()
	wantErr(t, get("main"), skilld.ETOOLARGE, nil, "o/r", fmt.Sprintf("%d-byte", limit))
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("refusing by Content-Length took %v: the body was read", d)
	}

	// No Content-Length (chunked): refused after limit+1 bytes.
	f.mu.Lock()
	f.CodeloadHook = func(w http.ResponseWriter, r *http.Request, archive []byte) bool {
		for chunk := range slices.Chunk(archive, 8<<10) {
			if _, err := w.Write(chunk); err != nil {
				return true
			}
			w.(http.Flusher).Flush()
		}
		return true
	}
	f.mu.Unlock()
	wantErr(t, get("main"), skilld.ETOOLARGE, nil, "o/r", fmt.Sprintf("%d-byte", limit))
	if err := get("small"); err != nil {
		t.Fatalf("a chunked archive under the limit: %v", err)
	}
}

// A redirect to a non-public address on a host the operator did not
// configure is refused, whatever name leads there: "localhost" is checked
// by the address it resolves to, not by its spelling. The configured host
// (the fake's 127.0.0.1) still works.
func TestRedirectToNonPublicAddressRefused(t *testing.T) {
	t.Parallel()
	f := newFakeGitHub(t)
	f.Archives["main"] = repoArchive(standardRepo()...)
	inner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the unconfigured loopback server was reached: %s", r.URL)
	}))
	t.Cleanup(inner.Close)
	port := inner.Listener.Addr().(*net.TCPAddr).Port
	targets := []string{fmt.Sprintf("http://localhost:%d/archive.tar.gz", port)}
	if l, err := net.Listen("tcp", "127.0.0.2:0"); err == nil {
		other := httptest.NewUnstartedServer(inner.Config.Handler)
		other.Listener.Close()
		other.Listener = l
		other.Start()
		t.Cleanup(other.Close)
		targets = append(targets, other.URL+"/archive.tar.gz")
	}
	for _, target := range targets {
		f.TarballHook = func(w http.ResponseWriter, r *http.Request, _ int) bool {
			http.Redirect(w, r, target, http.StatusFound)
			return true
		}
		src, _ := importer.ParseGitHubURL("https://github.com/o/r")
		_, _, err := f.client("").Fetch(t.Context(), src)
		refused, ok := errors.AsType[*importer.AddressRefusedError](err)
		if !ok || skilld.ErrorCode(err) != skilld.EFORBIDDEN || !refused.Redirect || !refused.Addr.Addr().IsLoopback() ||
			!strings.Contains(err.Error(), "redirect to ") || !strings.Contains(err.Error(), ", a loopback address, refused") {
			t.Errorf("redirect to %s: %v", target, err)
		}
	}
	f.TarballHook = nil
	src, _ := importer.ParseGitHubURL("https://github.com/o/r")
	if _, _, err := f.client("").Fetch(t.Context(), src); err != nil {
		t.Fatalf("the configured host: %v", err)
	}
}
