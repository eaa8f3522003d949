// Package web is skilld's browser interface: server-rendered pages over
// the same service calls, with the same roles, as the REST API. Nothing
// here reads the stores: every page asks the service on behalf of the
// signed-in token's actor, so the UI can never show or change more than
// that token could through the API.
package web

import (
	"embed"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/yuin/goldmark"
	"golang.org/x/sync/semaphore"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/httpapi"
	"github.com/skilld/skilld/internal/authlimit"
	"github.com/skilld/skilld/internal/streamlimit"
	"github.com/skilld/skilld/service"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Prefix is where the UI is mounted.
const Prefix = "/ui/"

// ContentSecurityPolicy is sent with every answer. It allows no inline
// script or style at all: every script and style sheet is a file of
// static/ (or the generated highlighting sheet), so an injected tag can
// neither run nor restyle the page.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// Options configure the UI; the zero value works.
type Options struct {
	// Watcher makes task pages follow runs of this process without
	// polling, as it does the API's event stream.
	Watcher httpapi.Watcher
	// Streams bounds the task pages' event streams with the API's own
	// (httpapi.Server.Streams): one budget per token and for the server,
	// whichever surface a stream comes through.
	Streams *streamlimit.Limiter
	// AuthLimit, when set, limits failed token checks per client address
	// at sign-in and on every page (shared with the REST API and MCP).
	AuthLimit *authlimit.Limiter
	// SecureCookies marks the session cookie Secure even when the request
	// did not arrive over TLS (a TLS-terminating proxy in front).
	SecureCookies bool
	// Logger records failures that the page cannot explain to the user.
	Logger *slog.Logger
	// MaxBodyBytesInFlight bounds the bytes of form bodies (uploads,
	// mostly) read at once, as the API bounds its own; default
	// httpapi.DefaultMaxBodyBytesInFlight.
	MaxBodyBytesInFlight int64
	// BodyIdleTimeout ends a form body that sends nothing for this long,
	// so a stalled upload does not hold its room; default
	// httpapi.DefaultBodyIdleTimeout.
	BodyIdleTimeout time.Duration
}

// UI holds everything parsed once: the page templates, the Markdown
// renderer and the highlighter. It has no mutable state beyond what is
// parsed on first use, so one value serves every request.
type UI struct {
	svc  *service.Service
	opts Options
	// pages are the page templates by name, parsed on the first page
	// served, not when the server starts.
	pages func() (map[string]*template.Template, error)
	md    goldmark.Markdown
	// highlighter is built on the first page or style sheet that needs
	// it, not when the server starts.
	highlighter func() (*highlighter, error)
	static      http.Handler
	// inFlight holds the room of the form bodies being read.
	inFlight *semaphore.Weighted
}

// New returns the UI's handler, to be mounted at Prefix. The embedded
// templates are parsed on the first page it serves; that they parse is a
// build matter, which TestTemplatesParse checks: were they broken, every
// page would answer 500 and log why. It panics if the embedded static
// folder is missing, which is a build mistake too.
func New(svc *service.Service, opts Options) http.Handler {
	ui, err := newUI(svc, opts)
	if err != nil {
		panic(err)
	}
	return ui.routes()
}

func newUI(svc *service.Service, opts Options) (*UI, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.BodyIdleTimeout <= 0 {
		opts.BodyIdleTimeout = httpapi.DefaultBodyIdleTimeout
	}
	if opts.MaxBodyBytesInFlight <= 0 {
		opts.MaxBodyBytesInFlight = httpapi.DefaultMaxBodyBytesInFlight
	}
	ui := &UI{svc: svc, opts: opts, md: newMarkdown(), inFlight: semaphore.NewWeighted(max(opts.MaxBodyBytesInFlight, uploadForm))}
	ui.pages = sync.OnceValues(func() (map[string]*template.Template, error) { return parsePages(templateFS) })
	ui.highlighter = sync.OnceValues(newHighlighter)
	sub, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, err
	}
	ui.static = http.StripPrefix(Prefix+"static/", http.FileServerFS(sub))
	return ui, nil
}

// parsePages parses each page of fsys's templates folder with the layout
// they share, by name ("skills" for templates/skills.html).
func parsePages(fsys fs.FS) (map[string]*template.Template, error) {
	names, err := fs.Glob(fsys, "templates/*.html")
	if err != nil {
		return nil, err
	}
	pages := map[string]*template.Template{}
	fm := funcs()
	for _, name := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(name, "templates/"), ".html")
		if base == "layout" {
			continue
		}
		t, err := template.New(base).Funcs(fm).ParseFS(fsys, "templates/layout.html", name)
		if err != nil {
			return nil, err
		}
		pages[base] = t
	}
	return pages, nil
}

// routes is the UI's route table. Every page is behind headers, which
// sets the security headers on every answer, errors included.
func (ui *UI) routes() http.Handler {
	mux := http.NewServeMux()
	p := strings.TrimSuffix(Prefix, "/")
	mux.HandleFunc("GET "+p+"/{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, Prefix+"skills", http.StatusSeeOther)
	})
	mux.HandleFunc("GET "+p+"/static/chroma.css", func(w http.ResponseWriter, r *http.Request) {
		h, err := ui.highlighter()
		if err != nil {
			ui.opts.Logger.Error("highlighter", "err", err)
			http.Error(w, "no style sheet", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		w.Header().Set("Cache-Control", "public, max-age=3600")
		w.Write(h.css)
	})
	mux.Handle("GET "+p+"/static/{file}", cacheStatic(ui.static))

	mux.HandleFunc("GET "+p+"/login", ui.loginPage)
	mux.HandleFunc("POST "+p+"/login", ui.login)
	mux.HandleFunc("POST "+p+"/logout", ui.form(skilld.RoleViewer, smallForm, ui.logout))

	mux.HandleFunc("GET "+p+"/skills", ui.page(ui.skillsPage))
	mux.HandleFunc("POST "+p+"/skills/upload", ui.form(skilld.RoleMember, uploadForm, ui.upload))
	mux.HandleFunc("POST "+p+"/skills/import", ui.form(skilld.RoleMember, smallForm, ui.importGitHub))
	mux.HandleFunc("GET "+p+"/skills/{id}", ui.page(ui.skillPage))
	mux.HandleFunc("GET "+p+"/skills/{id}/files/{path...}", ui.page(ui.filePage))
	mux.HandleFunc("GET "+p+"/skills/{id}/raw/{path...}", ui.page(ui.rawFile))
	mux.HandleFunc("GET "+p+"/skills/{id}/diff", ui.page(ui.diffPage))
	mux.HandleFunc("GET "+p+"/skills/{id}/edit", ui.page(ui.editPage))
	mux.HandleFunc("POST "+p+"/skills/{id}/edit", ui.form(skilld.RoleMember, editForm, ui.edit))
	mux.HandleFunc("POST "+p+"/skills/{id}/permissions/approve", ui.form(skilld.RoleAdmin, smallForm, ui.approvePermissions))

	mux.HandleFunc("GET "+p+"/catalog", ui.page(ui.catalogPage))
	mux.HandleFunc("POST "+p+"/catalog/install", ui.form(skilld.RoleMember, smallForm, ui.install))
	mux.HandleFunc("GET "+p+"/catalog/{r}/{name}", ui.page(ui.catalogItemPage))

	mux.HandleFunc("GET "+p+"/agents", ui.page(ui.agentsPage))
	mux.HandleFunc("GET "+p+"/agents/new", ui.page(ui.agentPage))
	mux.HandleFunc("POST "+p+"/agents/new", ui.form(skilld.RoleMember, smallForm, ui.saveAgent))
	mux.HandleFunc("GET "+p+"/agents/{id}", ui.page(ui.agentPage))
	mux.HandleFunc("POST "+p+"/agents/{id}", ui.form(skilld.RoleMember, smallForm, ui.saveAgent))

	mux.HandleFunc("GET "+p+"/tasks", ui.page(ui.tasksPage))
	mux.HandleFunc("POST "+p+"/tasks", ui.form(skilld.RoleMember, smallForm, ui.startTask))
	mux.HandleFunc("GET "+p+"/tasks/{id}", ui.page(ui.taskPage))
	mux.HandleFunc("GET "+p+"/tasks/{id}/events", ui.page(ui.taskEvents))
	mux.HandleFunc("POST "+p+"/tasks/{id}/cancel", ui.form(skilld.RoleMember, smallForm, ui.cancelTask))
	mux.HandleFunc("POST "+p+"/tasks/{id}/delete", ui.form(skilld.RoleMember, smallForm, ui.deleteTask))
	mux.HandleFunc("POST "+p+"/tasks/{id}/approvals/{call}/{decision}", ui.form(skilld.RoleAdmin, smallForm, ui.decide))

	mux.HandleFunc(p+"/", func(w http.ResponseWriter, r *http.Request) {
		ui.render(w, r, nil, http.StatusNotFound, "error", "Not found", errorData{Message: "There is no page at " + r.URL.Path + "."})
	})
	return headers(mux)
}

// headers sets the security headers of every answer before anything else
// runs, so no path (a panic page, a 404) goes out without them.
func headers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		next.ServeHTTP(w, r)
	})
}

func cacheStatic(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		next.ServeHTTP(w, r)
	})
}

// Redirect answers GET / with a redirect to the UI, for servers that
// mount it.
func Redirect(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, Prefix, http.StatusSeeOther)
}
