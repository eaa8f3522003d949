package importer_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skilld/skilld/importer"
	"github.com/skilld/skilld/importer/githubtest"
)

// fakeGitHub speaks the part of the GitHub REST API an import uses, on two
// real HTTP servers: the API host, which answers repository metadata and
// redirects tarball requests (302) like api.github.com, and a separate
// "codeload" host serving the archives, like codeload.github.com.
type fakeGitHub struct {
	API, Codeload *httptest.Server

	mu            sync.Mutex
	DefaultBranch string
	Archives      map[string][]byte // by ref
	// Hooks replace the normal answer for a route when they return true.
	RepoHook     func(w http.ResponseWriter, r *http.Request, n int) bool
	TarballHook  func(w http.ResponseWriter, r *http.Request, n int) bool
	CodeloadHook func(w http.ResponseWriter, r *http.Request, archive []byte) bool
	// What the servers saw: the Authorization header per host, counts.
	APIAuth, CodeloadAuth   []string
	RepoCalls, TarballCalls int
}

const repoPrefix = "/repos/o/r"

func newFakeGitHub(t testing.TB) *fakeGitHub {
	f := &fakeGitHub{DefaultBranch: "main", Archives: map[string][]byte{}}
	f.Codeload = httptest.NewServer(http.HandlerFunc(f.serveCodeload))
	f.API = httptest.NewServer(http.HandlerFunc(f.serveAPI))
	t.Cleanup(f.API.Close)
	t.Cleanup(f.Codeload.Close)
	return f
}

// client is an importer pointed at the fake, with short retry delays.
func (f *fakeGitHub) client(token string) *importer.GitHub {
	g := &importer.GitHub{APIURL: f.API.URL, Token: token}
	importer.SetBackoff(g, time.Millisecond)
	return g
}

func (f *fakeGitHub) serveAPI(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.APIAuth = append(f.APIAuth, r.Header.Get("Authorization"))
	f.mu.Unlock()
	switch {
	case r.URL.Path == repoPrefix:
		f.mu.Lock()
		f.RepoCalls++
		n, hook := f.RepoCalls, f.RepoHook
		f.mu.Unlock()
		if hook != nil && hook(w, r, n) {
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"full_name": "o/r", "default_branch": f.DefaultBranch})
	case strings.HasPrefix(r.URL.Path, repoPrefix+"/tarball/"):
		ref := strings.TrimPrefix(r.URL.Path, repoPrefix+"/tarball/")
		f.mu.Lock()
		f.TarballCalls++
		n, hook := f.TarballCalls, f.TarballHook
		_, ok := f.Archives[ref]
		f.mu.Unlock()
		if hook != nil && hook(w, r, n) {
			return
		}
		if !ok {
			writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
			return
		}
		// As GitHub does: the download URL carries a short-lived token.
		http.Redirect(w, r, f.Codeload.URL+"/codeload/o/r/legacy.tar.gz/"+ref+"?token=SHORTLIVED", http.StatusFound)
	default:
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
	}
}

func (f *fakeGitHub) serveCodeload(w http.ResponseWriter, r *http.Request) {
	ref := strings.TrimPrefix(r.URL.Path, "/codeload/o/r/legacy.tar.gz/")
	f.mu.Lock()
	f.CodeloadAuth = append(f.CodeloadAuth, r.Header.Get("Authorization"))
	archive, ok := f.Archives[ref]
	hook := f.CodeloadHook
	f.mu.Unlock()
	if !ok || r.URL.Query().Get("token") != "SHORTLIVED" {
		http.NotFound(w, r)
		return
	}
	if hook != nil && hook(w, r, archive) {
		return
	}
	w.Header().Set("Content-Type", "application/x-gzip")
	w.Header().Set("Content-Length", fmt.Sprint(len(archive)))
	_, _ = w.Write(archive)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// file is one entry of a test repository.
type file = githubtest.File

// repoArchive builds the archive GitHub would serve for the files of o/r.
func repoArchive(files ...file) []byte {
	return githubtest.Archive("o", "r", files...)
}

// tarOf is a plain tar of name/data pairs, without a top folder.
func tarOf(tb testing.TB, nameData ...string) []byte {
	tb.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for i := 0; i+1 < len(nameData); i += 2 {
		h := &tar.Header{Name: nameData[i], Mode: 0o644, Size: int64(len(nameData[i+1])), Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(h); err != nil {
			tb.Fatal(err)
		}
		if _, err := tw.Write([]byte(nameData[i+1])); err != nil {
			tb.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func gzipped(tb testing.TB, b []byte) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		tb.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}
