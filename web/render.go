package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"maps"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/httpapi"
	"github.com/skilld/skilld/internal/units"
	"github.com/skilld/skilld/service"
)

// view is what the layout gets: the page's own data in Data.
type view struct {
	Title string
	// Self is the signed-in token, for the navigation; nil on the
	// sign-in page.
	Self *service.TokenSelf
	CSRF string
	// Section is the navigation entry the page belongs to, marked
	// aria-current.
	Section string
	Data    any
}

// section maps pages to their navigation entry.
func section(page string) string {
	switch page {
	case "skills", "skill", "file", "diff", "edit":
		return "skills"
	case "agents", "agent":
		return "agents"
	case "tasks", "task":
		return "tasks"
	}
	return page
}

// errorData is the data of the error page, and the Message part of pages
// that show an error next to their form.
type errorData struct {
	Message string
	Details []skilld.Detail
}

// render executes a page into a buffer first, so a template failure
// becomes a clean 500 instead of half a page.
func (ui *UI) render(w http.ResponseWriter, r *http.Request, s *session, status int, page, title string, data any) {
	pages, err := ui.pages()
	if err != nil {
		ui.opts.Logger.Error("web: parsing the templates", "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	t := pages[page]
	v := view{Title: title, Section: section(page), Data: data}
	if s != nil {
		v.Self, v.CSRF = s.self, s.csrf
	}
	var buf bytes.Buffer
	if t == nil {
		ui.opts.Logger.Error("web: no such template", "page", page)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	if err := t.ExecuteTemplate(&buf, "layout", v); err != nil {
		ui.opts.Logger.Error("web: rendering", "page", page, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// fail shows an error the service (or the form check) returned, with its
// code's status: another workspace's object is a plain 404 page, a role
// refusal the service's forbidden message.
func (ui *UI) fail(w http.ResponseWriter, r *http.Request, s *session, err error) {
	st := status(err)
	if st >= 500 {
		ui.opts.Logger.Error("web: request failed", "path", r.URL.Path, "err", err)
	}
	title := http.StatusText(st)
	var d errorData
	d.Message = skilld.ErrorMessage(err)
	var se *skilld.Error
	if e, ok := err.(*skilld.Error); ok {
		se = e
	}
	if se != nil {
		d.Details = se.Details
	}
	if after := httpapi.RetryAfterOf(err); after != "" && (st == http.StatusTooManyRequests || st == http.StatusServiceUnavailable) {
		w.Header().Set("Retry-After", after)
	}
	ui.render(w, r, s, st, "error", title, d)
}

// status is the HTTP status of err, as the API answers it (an invalid
// form is 422: understood and refused).
func status(err error) int { return httpapi.StatusOf(skilld.ErrorCode(err)) }

// funcs returns the template helpers.
func funcs() template.FuncMap {
	return template.FuncMap{
		"pathEscape": escapePath,
		"query":      url.QueryEscape,
		"short":      shortDigest,
		"when": func(t time.Time) string {
			if t.IsZero() {
				return ""
			}
			return t.UTC().Format("2006-01-02 15:04 UTC")
		},
		"show":    show,
		"size":    units.Bytes,
		"join":    strings.Join,
		"window":  units.Window,
		"percent": func(share float64) float64 { return share * 100 },
		// mean shows a mean to one decimal, "–" when there is none.
		"mean": func(m *float64) string {
			if m == nil {
				return "–"
			}
			return fmt.Sprintf("%.1f", *m)
		},
	}
}

// escapePath escapes each segment of a file path for a URL, keeping the
// slashes.
func escapePath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}

func shortDigest(d string) string {
	_, h, ok := strings.Cut(d, ":")
	if !ok {
		h = d
	}
	if len(h) > 12 {
		h = h[:12]
	}
	return h
}

// show writes a value decoded from JSON for people: whole numbers without
// exponents, lists joined, objects as compact JSON.
func show(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1e15 {
			return fmt.Sprintf("%d", int64(v))
		}
		return fmt.Sprintf("%g", v)
	case bool:
		if v {
			return "yes"
		}
		return "no"
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = show(e)
		}
		return strings.Join(parts, ", ")
	case map[string]any:
		// A breakdown (tokens by part): "key value" pairs by key.
		keys := slices.Sorted(maps.Keys(v))
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + " " + show(v[k])
		}
		return strings.Join(parts, " · ")
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func urlQuery(s string) string { return url.QueryEscape(s) }
