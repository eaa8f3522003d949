package importer_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skilld/skilld/importer"
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

// file is one entry of a test repository. Type 0 is a regular file.
type file struct {
	Name string
	Data string
	Mode int64
	Type byte
	Link string
}

// repoArchive builds a tar.gz the way `git archive` (and so GitHub) does: a
// pax global header recording the commit, then every entry below one
// "o-r-<sha>/" folder, each folder's entry before its contents.
func repoArchive(tb testing.TB, files ...file) []byte {
	tb.Helper()
	return repoArchiveLevel(tb, gzip.DefaultCompression, files...)
}

// repoArchiveLevel is repoArchive with a gzip level; tests with megabytes
// of random data store it (gzip.NoCompression), which is much faster under
// the race detector and gives the same archive size anyway.
func repoArchiveLevel(tb testing.TB, level int, files ...file) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, level)
	if err != nil {
		tb.Fatal(err)
	}
	writeRepoTar(tb, zw, files)
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

const sha = "4f3c2b1a09f8e7d6c5b4a3928170f6e5d4c3b2a1"

func writeRepoTar(tb testing.TB, w interface{ Write([]byte) (int, error) }, files []file) {
	tb.Helper()
	tw := tar.NewWriter(w)
	must := func(err error) {
		if err != nil {
			tb.Fatal(err)
		}
	}
	mtime := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	must(tw.WriteHeader(&tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header",
		PAXRecords: map[string]string{"comment": sha}}))
	top := "o-r-" + sha[:7] + "/"
	seen := map[string]bool{}
	var dir func(d string)
	dir = func(d string) {
		if d == "." || seen[d] {
			return
		}
		dir(path.Dir(d))
		seen[d] = true
		must(tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: top + d + "/", Mode: 0o775, ModTime: mtime}))
	}
	must(tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: top, Mode: 0o775, ModTime: mtime}))
	for _, f := range files {
		dir(path.Dir(f.Name))
		h := &tar.Header{Name: top + f.Name, Mode: f.Mode, Typeflag: f.Type, Linkname: f.Link, ModTime: mtime}
		if h.Mode == 0 {
			h.Mode = 0o664
		}
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
			h.Size = int64(len(f.Data))
		}
		must(tw.WriteHeader(h))
		if h.Size > 0 {
			_, err := tw.Write([]byte(f.Data))
			must(err)
		}
	}
	must(tw.Close())
}

// skillMD is a valid SKILL.md for a skill named name.
func skillMD(name string) string {
	return "---\nname: " + name + "\ndescription: The " + name + " skill, for tests.\n---\n\n# " + name + "\n"
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
