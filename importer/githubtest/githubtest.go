// Package githubtest is a fake GitHub for tests across skilld: real HTTP
// servers that speak the part of the GitHub REST API an import uses. The API
// server answers repository metadata and redirects tarball requests (302)
// to a separate download server, as api.github.com and codeload.github.com
// do, and the archives are real tar.gz files shaped like `git archive`
// output.
package githubtest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// File is one entry of a test repository: a regular file unless Type says
// otherwise (tar.TypeSymlink with Link, say).
type File struct {
	Name string
	Data string
	Mode int64 // 0 means 0644
	Type byte  // a tar type flag; 0 means tar.TypeReg
	Link string
}

// Server is a fake GitHub. Point an importer.GitHub at API.URL.
type Server struct {
	API, Codeload *httptest.Server

	mu    sync.Mutex
	repos map[string]*repo // "owner/name"
	// Hook, when set, may answer an API request itself (return true) — to
	// simulate rate limits, outages or bad tokens.
	Hook func(w http.ResponseWriter, r *http.Request) bool
}

type repo struct {
	branch   string
	archives map[string][]byte // by ref
}

// New starts a fake GitHub, closed when the test ends.
func New(t testing.TB) *Server {
	s := &Server{repos: map[string]*repo{}}
	s.Codeload = httptest.NewServer(http.HandlerFunc(s.serveCodeload))
	s.API = httptest.NewServer(http.HandlerFunc(s.serveAPI))
	t.Cleanup(s.API.Close)
	t.Cleanup(s.Codeload.Close)
	return s
}

// AddRepo publishes repository owner/name whose default branch (and only
// ref) holds files.
func (s *Server) AddRepo(owner, name, branch string, files ...File) {
	s.AddArchive(owner, name, branch, Archive(owner, name, files...))
	s.mu.Lock()
	s.repos[owner+"/"+name].branch = branch
	s.mu.Unlock()
}

// AddArchive serves archive as ref of owner/name.
func (s *Server) AddArchive(owner, name, ref string, archive []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[owner+"/"+name]
	if r == nil {
		r = &repo{branch: ref, archives: map[string][]byte{}}
		s.repos[owner+"/"+name] = r
	}
	r.archives[ref] = archive
}

func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	if s.Hook != nil && s.Hook(w, r) {
		return
	}
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/repos/"), "/", 4)
	if !strings.HasPrefix(r.URL.Path, "/repos/") || len(parts) < 2 {
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
		return
	}
	full := parts[0] + "/" + parts[1]
	s.mu.Lock()
	rp := s.repos[full]
	s.mu.Unlock()
	switch {
	case rp == nil:
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
	case len(parts) == 2:
		writeJSON(w, http.StatusOK, map[string]any{"full_name": full, "default_branch": rp.branch})
	case len(parts) == 4 && parts[2] == "tarball":
		s.mu.Lock()
		_, ok := rp.archives[parts[3]]
		s.mu.Unlock()
		if !ok {
			writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
			return
		}
		http.Redirect(w, r, s.Codeload.URL+"/"+full+"/legacy.tar.gz/"+parts[3]+"?token=SHORTLIVED", http.StatusFound)
	default:
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
	}
}

func (s *Server) serveCodeload(w http.ResponseWriter, r *http.Request) {
	full, ref, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/legacy.tar.gz/")
	s.mu.Lock()
	var archive []byte
	if rp := s.repos[full]; ok && rp != nil {
		archive, ok = rp.archives[ref]
	}
	s.mu.Unlock()
	if !ok || r.URL.Query().Get("token") != "SHORTLIVED" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/x-gzip")
	w.Header().Set("Content-Length", strconv.Itoa(len(archive)))
	w.Write(archive)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// Archive builds a repository tar.gz the way `git archive` does: a pax
// global header with the commit, then every entry below one
// "owner-name-<sha>/" folder, folders before their contents.
func Archive(owner, name string, files ...File) []byte {
	return ArchiveLevel(owner, name, gzip.DefaultCompression, files...)
}

// ArchiveLevel is Archive with a gzip level: tests with megabytes of random
// data store it (gzip.NoCompression), which is much faster under the race
// detector and gives the same archive size anyway. It panics if the
// archive cannot be written, which only a malformed File can cause.
func ArchiveLevel(owner, name string, level int, files ...File) []byte {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, level)
	must(err)
	tw := tar.NewWriter(zw)
	mtime := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	const sha = "4f3c2b1a09f8e7d6c5b4a3928170f6e5d4c3b2a1"
	must(tw.WriteHeader(&tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header", PAXRecords: map[string]string{"comment": sha}}))
	top := owner + "-" + name + "-" + sha[:7] + "/"
	seen := map[string]bool{".": true}
	var dir func(d string)
	dir = func(d string) {
		if seen[d] {
			return
		}
		dir(path.Dir(d))
		seen[d] = true
		must(tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: top + d + "/", Mode: 0o775, ModTime: mtime}))
	}
	must(tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: top, Mode: 0o775, ModTime: mtime}))
	for _, f := range files {
		dir(path.Dir(f.Name))
		h := &tar.Header{Typeflag: f.Type, Name: top + f.Name, Mode: f.Mode, Linkname: f.Link, ModTime: mtime}
		if h.Mode == 0 {
			h.Mode = 0o644
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
	must(zw.Close())
	return buf.Bytes()
}

func must(err error) {
	if err != nil {
		panic("githubtest: writing an archive: " + err.Error())
	}
}

// SkillMD is a valid SKILL.md for a skill named name.
func SkillMD(name string) string {
	return "---\nname: " + name + "\ndescription: The " + name + " skill, imported in a test.\n---\n\n# " + name + "\n"
}

// FilesOf turns a path → content map into files, in path order; scripts
// (.sh, or content starting with "#!") are executable.
func FilesOf(m map[string]string) []File {
	out := make([]File, 0, len(m))
	for name, data := range m {
		f := File{Name: name, Data: data}
		if strings.HasSuffix(name, ".sh") || strings.HasPrefix(data, "#!") {
			f.Mode = 0o755
		}
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b File) int { return strings.Compare(a.Name, b.Name) })
	return out
}
