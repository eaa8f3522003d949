package web_test

import (
	"archive/zip"
	"bytes"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/blob/fsblob"
	"github.com/skilld/skilld/httpapi"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/storetest"
	"github.com/skilld/skilld/web"
)

// env is the UI as skilld serve mounts it (behind the API server's
// middleware), over a real service on SQLite, with tokens of every role
// in workspace "team" and a member of workspace "other".
type env struct {
	t                              *testing.T
	db                             store.Store
	svc                            *service.Service
	srv                            *httptest.Server
	root                           service.Actor
	admin, member, viewer, other   service.Actor
	adminTok, memberTok, viewerTok string
	otherTok                       string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvWith(t, service.Config{})
}

// newEnvWith is newEnv with the service configured by cfg.
func newEnvWith(t *testing.T, cfg service.Config) *env {
	t.Helper()
	e := &env{t: t, db: storetest.Drivers(t)[0].Open(t)}
	blobs, err := fsblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e.svc = service.New(e.db, blobs, nil, cfg)
	secret, err := e.svc.Bootstrap(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	if e.root, err = e.svc.Authenticate(t.Context(), secret); err != nil {
		t.Fatal(err)
	}
	teamAdmin := e.workspace("team")
	e.adminTok, e.admin = e.token(teamAdmin, skilld.RoleAdmin)
	e.memberTok, e.member = e.token(teamAdmin, skilld.RoleMember)
	e.viewerTok, e.viewer = e.token(teamAdmin, skilld.RoleViewer)
	e.otherTok, e.other = e.token(e.workspace("other"), skilld.RoleMember)
	e.serve(web.Options{})
	return e
}

// serve serves the UI with opts (and a silent logger), in place of the
// server there was.
func (e *env) serve(opts web.Options) {
	if e.srv != nil {
		e.srv.Close()
	}
	logger := slog.New(slog.DiscardHandler)
	opts.Logger = logger
	api := &httpapi.Server{Service: e.svc, Version: "test", Logger: logger,
		Mounts: map[string]http.Handler{web.Prefix: web.New(e.svc, opts), "GET /{$}": http.HandlerFunc(web.Redirect)}}
	e.srv = httptest.NewServer(api.Handler())
	e.t.Cleanup(e.srv.Close)
}

func (e *env) workspace(name string) service.Actor {
	e.t.Helper()
	if _, err := e.svc.CreateWorkspace(e.t.Context(), e.root, service.CreateWorkspaceParams{Name: name}); err != nil {
		e.t.Fatal(err)
	}
	a, err := e.svc.In(e.t.Context(), e.root, name)
	if err != nil {
		e.t.Fatal(err)
	}
	return a
}

func (e *env) token(admin service.Actor, role skilld.Role) (string, service.Actor) {
	e.t.Helper()
	tok, err := e.svc.CreateToken(e.t.Context(), admin, service.CreateTokenParams{Name: string(role), Role: role})
	if err != nil {
		e.t.Fatal(err)
	}
	a, err := e.svc.Authenticate(e.t.Context(), tok.Secret)
	if err != nil {
		e.t.Fatal(err)
	}
	return tok.Secret, a
}

// skill creates a skill from files through the service.
func (e *env) skill(a service.Actor, files map[string]string) *service.SkillView {
	e.t.Helper()
	v, err := e.svc.CreateSkillFromArchive(e.t.Context(), a, service.CreateSkillFromArchiveParams{Archive: zipOf(e.t, files)})
	if err != nil {
		e.t.Fatal(err)
	}
	return v
}

func skillMD(name, desc, body string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\n" + body
}

func zipOf(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// browser is one signed-in (or not) browser: a cookie jar that does not
// follow redirects, so tests see them.
type browser struct {
	e      *env
	client *http.Client
}

// page is an answer.
type page struct {
	status int
	header http.Header
	body   string
	url    string
}

func (e *env) browser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{e: e, client: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// signedIn is a browser signed in with token.
func (e *env) signedIn(token string) *browser {
	e.t.Helper()
	b := e.browser()
	p := b.login(token)
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/ui/skills" {
		e.t.Fatalf("sign-in: %d %s\n%s", p.status, p.header.Get("Location"), p.body)
	}
	return b
}

func (b *browser) login(token string) page {
	b.e.t.Helper()
	lp := b.get("/ui/login")
	return b.post("/ui/login", url.Values{"csrf": {csrfOf(b.e.t, lp)}, "token": {token}})
}

func (b *browser) do(req *http.Request) page {
	b.e.t.Helper()
	resp, err := b.client.Do(req)
	if err != nil {
		b.e.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		b.e.t.Fatal(err)
	}
	return page{status: resp.StatusCode, header: resp.Header, body: string(data), url: req.URL.Path}
}

func (b *browser) get(path string) page {
	b.e.t.Helper()
	req, _ := http.NewRequestWithContext(b.e.t.Context(), http.MethodGet, b.e.srv.URL+path, nil)
	return b.do(req)
}

// post sends a form; headers are name, value pairs.
func (b *browser) post(path string, form url.Values, headers ...string) page {
	b.e.t.Helper()
	req, _ := http.NewRequestWithContext(b.e.t.Context(), http.MethodPost, b.e.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return b.do(req)
}

// upload posts a multipart form with one file field.
func (b *browser) upload(path string, fields url.Values, field, name string, data []byte) page {
	b.e.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, vs := range fields {
		for _, v := range vs {
			mw.WriteField(k, v)
		}
	}
	fw, _ := mw.CreateFormFile(field, name)
	fw.Write(data)
	mw.Close()
	req, _ := http.NewRequestWithContext(b.e.t.Context(), http.MethodPost, b.e.srv.URL+path, &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return b.do(req)
}

// csrf reads the CSRF token from a page the browser gets.
func (b *browser) csrf() string {
	b.e.t.Helper()
	return csrfOf(b.e.t, b.get("/ui/skills"))
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func csrfOf(t *testing.T, p page) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no csrf field on the page (%d):\n%s", p.status, p.body)
	}
	return m[1]
}

// element returns the inner text region of the element with id, roughly:
// from its opening tag to the end of the page. Tests look for what it
// holds or lacks.
func element(t *testing.T, p page, id string) string {
	t.Helper()
	i := strings.Index(p.body, `id="`+id+`"`)
	if i < 0 {
		t.Fatalf("no #%s on %s (%d):\n%s", id, p.url, p.status, p.body)
	}
	return p.body[i:]
}

// errorText is the text of #error.
func errorText(t *testing.T, p page) string {
	t.Helper()
	s := element(t, p, "error")
	s = s[strings.Index(s, ">")+1:]
	return s[:strings.Index(s, "</p>")]
}
