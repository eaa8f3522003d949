package httpapi_test

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/skilld/skilld/importer/githubtest"
)

// fakeGitHub is the shared fake GitHub with the repositories tests add,
// plus an "o/rate-limited" repository whose every request hits GitHub's
// primary rate limit.
type fakeGitHub struct {
	*githubtest.Server
	URL string
}

func newFakeGitHub(t testing.TB) *fakeGitHub {
	s := githubtest.New(t)
	s.Hook = func(w http.ResponseWriter, r *http.Request) bool {
		if !strings.HasPrefix(r.URL.Path, "/repos/o/rate-limited") {
			return false
		}
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("Retry-After", "42")
		http.Error(w, `{"message":"API rate limit exceeded"}`, http.StatusForbidden)
		return true
	}
	return &fakeGitHub{Server: s, URL: s.API.URL}
}

// addRepo serves files as repository owner/repo at branch main.
func (f *fakeGitHub) addRepo(_ testing.TB, owner, repo string, files map[string]string) {
	f.AddRepo(owner, repo, "main", githubtest.FilesOf(files)...)
}

// lockedWriter serializes writes of concurrent handlers to a log buffer.
type lockedWriter struct {
	mu sync.Mutex
	w  interface {
		io.Writer
		String() string
	}
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.String()
}
