package web

import (
	"bytes"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
)

// TestTemplatesParse: the embedded templates, which the UI parses on its
// first page rather than at start, parse; every page has the layout.
func TestTemplatesParse(t *testing.T) {
	pages, err := parsePages(templateFS)
	if err != nil {
		t.Fatalf("the embedded templates: %v", err)
	}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) != len(names)-1 {
		t.Errorf("%d pages from %d template files (one of them the layout)", len(pages), len(names))
	}
	for _, name := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(name, "templates/"), ".html")
		if base == "layout" {
			continue
		}
		if p := pages[base]; p == nil || p.Lookup("layout") == nil {
			t.Errorf("page %s: missing, or without the layout", base)
		}
	}
}

// TestBrokenTemplates: a template that does not parse is an error of
// parsePages, and a UI with it answers every page (the error page too)
// 500 and logs why, instead of failing at start.
func TestBrokenTemplates(t *testing.T) {
	broken := fstest.MapFS{"templates/skills.html": {Data: []byte(`{{define "content"}}{{range .Data}}{{end}}`)}}
	for _, name := range []string{"layout", "error"} {
		data, err := fs.ReadFile(templateFS, "templates/"+name+".html")
		if err != nil {
			t.Fatal(err)
		}
		broken["templates/"+name+".html"] = &fstest.MapFile{Data: data}
	}
	if _, err := parsePages(broken); err == nil || !strings.Contains(err.Error(), "skills") {
		t.Fatalf("parsePages of a page with an unclosed range: %v, want an error naming it", err)
	}
	var logged bytes.Buffer
	ui, err := newUI(nil, Options{Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ui.pages = sync.OnceValues(func() (map[string]*template.Template, error) { return parsePages(broken) })
	w := httptest.NewRecorder()
	ui.render(w, httptest.NewRequest(http.MethodGet, "/ui/skills", nil), nil, http.StatusOK, "error", "Not found", errorData{Message: "x"})
	if w.Code != http.StatusInternalServerError || strings.Contains(w.Body.String(), "<html") {
		t.Errorf("a page with broken templates: %d %q, want a plain 500", w.Code, w.Body.String())
	}
	if !strings.Contains(logged.String(), "parsing the templates") || !strings.Contains(logged.String(), "skills") {
		t.Errorf("the log does not say why: %q", logged.String())
	}
}
