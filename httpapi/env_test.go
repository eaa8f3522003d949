package httpapi_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skilld/skilld/blob"
	"github.com/skilld/skilld/blob/fsblob"
	"github.com/skilld/skilld/executor"
	"github.com/skilld/skilld/httpapi"
	"github.com/skilld/skilld/importer"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/storetest"
)

// testEnv is a real server: the service over a real store (SQLite or
// PostgreSQL) and blobs in a temp dir, behind an httptest server, with a
// fake GitHub next to it.
type testEnv struct {
	t       testing.TB
	db      store.Store
	svc     *service.Service
	srv     *httptest.Server
	blobDir string
	github  *fakeGitHub
	logs    *lockedWriter
	admin   string // instance-admin token of workspace "default"
	pathDir string // the allowed root for path imports
}

// forEachDriver runs fn on a fresh environment for every database driver
// the tests can reach.
func forEachDriver(t *testing.T, fn func(t *testing.T, e *testEnv)) {
	for _, d := range storetest.Drivers(t) {
		t.Run(d.Name, func(t *testing.T) {
			fn(t, newEnv(t, d.Open))
		})
	}
}

// firstDriver is SQLite, for tests whose subject is not the database.
func firstDriver(t *testing.T) storetest.Opener { return storetest.Drivers(t)[0].Open }

func newEnv(t *testing.T, open storetest.Opener) *testEnv {
	t.Helper()
	return newEnvWith(t, open(t))
}

// newEnvWith builds the environment over an open store.
func newEnvWith(t testing.TB, db store.Store) *testEnv {
	t.Helper()
	return newEnvIn(t, db, t.TempDir())
}

// newEnvIn builds the environment over an open store with blobs in
// blobDir.
func newEnvIn(t testing.TB, db store.Store, blobDir string) *testEnv {
	t.Helper()
	e := &testEnv{t: t, db: db, blobDir: blobDir, pathDir: t.TempDir(), logs: &lockedWriter{w: &bytes.Buffer{}}}
	blobs, err := fsblob.New(e.blobDir)
	if err != nil {
		t.Fatal(err)
	}
	e.github = newFakeGitHub(t)
	e.svc = e.newService(blob.Marked(blobs), nil)
	e.admin, err = e.svc.Bootstrap(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	e.serve(&httpapi.Server{})
	return e
}

func (e *testEnv) newService(blobs blob.Store, exec func(*service.Service) service.Executor) *service.Service {
	return service.New(e.db, blobs, &importer.GitHub{APIURL: e.github.URL}, service.Config{PathImportRoots: []string{e.pathDir}, Executor: exec})
}

// serve serves e's service with api's settings (its Service, Version and,
// when not set, Logger and failed-authentication limit filled in), in
// place of the server there was.
func (e *testEnv) serve(api *httpapi.Server) {
	if e.srv != nil {
		e.srv.Close()
	}
	api.Service, api.Version = e.svc, "test"
	if api.Logger == nil {
		api.Logger = slog.New(slog.NewTextHandler(e.logs, nil))
	}
	if api.AuthFailuresPerAddress == 0 {
		// Tests send many wrong tokens on purpose, all from 127.0.0.1;
		// the failed-authentication limit has a test of its own.
		api.AuthFailuresPerAddress = 1 << 30
	}
	e.srv = httptest.NewServer(api.Handler())
	e.t.Cleanup(e.srv.Close)
}

// runTasks makes e's service again, over the same stores, with a local
// executor of cfg (its Service the new service), and serves it with api
// (nil: the defaults, the executor streaming events). The executor stops
// at the end of the test.
func (e *testEnv) runTasks(cfg executor.Config, api *httpapi.Server) *executor.Local {
	var ex *executor.Local
	e.svc = e.newService(e.svc.Packages().Blobs, func(s *service.Service) service.Executor {
		cfg.Service = s
		ex = executor.New(cfg)
		return ex
	})
	e.t.Cleanup(ex.Shutdown)
	if api == nil {
		api = &httpapi.Server{Watcher: ex}
	}
	e.serve(api)
	return ex
}

// response is what a test request got back.
type response struct {
	status int
	header http.Header
	body   []byte
}

// json decodes the body into a generic map (or v when given).
func (r response) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not a JSON object (status %d): %v\n%s", r.status, err, r.body)
	}
	return m
}

func (r response) errorCode(t testing.TB) string {
	t.Helper()
	e, _ := r.json(t)["error"].(map[string]any)
	if e == nil {
		t.Fatalf("status %d without an error body: %s", r.status, r.body)
	}
	return e["code"].(string)
}

func (r response) errorMessage(t testing.TB) string {
	t.Helper()
	return r.json(t)["error"].(map[string]any)["message"].(string)
}

// errorField is the field of the error's first detail, or "".
func (r response) errorField(t testing.TB) string {
	t.Helper()
	ds, _ := r.json(t)["error"].(map[string]any)["details"].([]any)
	if len(ds) == 0 {
		return ""
	}
	f, _ := ds[0].(map[string]any)["field"].(string)
	return f
}

// request sends a request; body is a []byte sent as is, or anything else
// encoded as JSON; headers are name, value pairs. The request and its
// answer are checked against the OpenAPI document (see checkExchange): a
// mismatch fails the test, naming the route, the status and what breaks.
func (e *testEnv) request(method, path, token string, body any, headers ...string) response {
	e.t.Helper()
	var sent []byte
	switch b := body.(type) {
	case nil:
	case []byte:
		sent = b
	case string:
		sent = []byte(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		sent = data
		headers = append(headers, "Content-Type", "application/json")
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(sent)
	}
	req, err := http.NewRequestWithContext(e.t.Context(), method, e.srv.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatalf("%s %s: reading body: %v", method, path, err)
	}
	e.checkContract(req, sent, resp, data)
	return response{status: resp.StatusCode, header: resp.Header, body: data}
}

// checkContract fails the test when a request (whose body was sent) or
// its answer (whose body was data) breaks the OpenAPI document. request
// calls it for every exchange; a test that sends a request by hand can
// call it too.
func (e *testEnv) checkContract(req *http.Request, sent []byte, resp *http.Response, data []byte) {
	e.t.Helper()
	target := strings.TrimPrefix(req.URL.String(), e.srv.URL)
	for _, p := range apiContract().checkExchange(exchange{method: req.Method, target: target, reqHeader: req.Header, reqBody: sent,
		status: resp.StatusCode, respHeader: resp.Header, respBody: data}) {
		e.t.Errorf("OpenAPI contract: %s\n%s", p, clip(data))
	}
}

// clip shortens a body quoted in a failure.
func clip(b []byte) []byte {
	if len(b) > 2000 {
		return append(b[:2000:2000], "…"...)
	}
	return b
}

// must sends a request and fails the test unless the status is want.
func (e *testEnv) must(want int, method, path, token string, body any, headers ...string) map[string]any {
	e.t.Helper()
	r := e.request(method, path, token, body, headers...)
	if r.status != want {
		e.t.Fatalf("%s %s: status %d, want %d: %s", method, path, r.status, want, r.body)
	}
	if len(r.body) == 0 || r.header.Get("Content-Type") != "application/json; charset=utf-8" {
		return nil
	}
	return r.json(e.t)
}

// token creates a token in workspace ws with role and returns its secret.
func (e *testEnv) token(ws, name, role string) string {
	e.t.Helper()
	m := e.must(201, "POST", "/v1/workspaces/"+ws+"/tokens", e.admin, map[string]any{"name": name, "role": role})
	return m["token"].(string)
}

// blobCount counts the files in the blob store, temp files included.
func (e *testEnv) blobCount() int {
	e.t.Helper()
	n := 0
	filepath.WalkDir(e.blobDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	return n
}

// skillMD returns a valid SKILL.md for name.
func skillMD(name, desc string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\n\n# " + name + "\n\nInstructions for " + name + ".\n"
}

// zipOf builds a zip of files; paths ending in .sh are executable.
func zipOf(t testing.TB, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, p := range sortedKeys(files) {
		h := &zip.FileHeader{Name: p, Method: zip.Deflate}
		h.SetMode(0o644)
		if strings.HasSuffix(p, ".sh") {
			h.SetMode(0o755)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(files[p]))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// tarGzOf builds a tar.gz of files.
func tarGzOf(t testing.TB, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, p := range sortedKeys(files) {
		mode := int64(0o644)
		if strings.HasSuffix(p, ".sh") {
			mode = 0o755
		}
		if err := tw.WriteHeader(&tar.Header{Name: p, Mode: mode, Size: int64(len(files[p])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(files[p]))
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	gz.Close()
	return buf.Bytes()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
