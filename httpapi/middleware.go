package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/skilld/skilld"
)

type requestIDKey struct{}

// requestID returns the ID the logging middleware gave the request; error
// responses quote it so an operator can find the log line.
func requestID(r *http.Request) string {
	id, _ := r.Context().Value(requestIDKey{}).(string)
	return id
}

func newRequestID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// recorder remembers the status and size of a response for the log, and
// whether the header went out (after which a panic cannot become a 500).
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *recorder) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *recorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *recorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// logRequests gives each request an ID (its sane incoming X-Request-Id, or
// a new one) and logs one line when it is done, with its route pattern,
// status and duration.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := requestIDFrom(r)
		r = r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id))
		w.Header().Set("X-Request-Id", id)
		rec := &recorder{ResponseWriter: w}
		defer func() {
			level := slogLevel(rec.status)
			s.logger().Log(r.Context(), level, "request", "request_id", id, "method", r.Method, "path", r.URL.Path,
				"route", r.Pattern, "status", rec.status, "bytes", rec.bytes, "duration", time.Since(start).Round(time.Microsecond))
		}()
		next.ServeHTTP(rec, r)
	})
}

// recoverPanics turns a panic in a handler into a 500 with the JSON error
// body (when nothing was written yet) and logs it with its stack, so one
// bad request cannot take the process down or leave the client hanging.
func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v) // a deliberate abort: net/http closes the connection quietly
			}
			s.logger().ErrorContext(r.Context(), "panic", "request_id", requestID(r), "method", r.Method,
				"path", r.URL.Path, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			if rec, ok := w.(*recorder); ok && rec.status != 0 {
				panic(http.ErrAbortHandler) // too late for a status: cut the response short
			}
			s.writeError(w, r, fmt.Errorf("panic: %v", v))
		}()
		next.ServeHTTP(w, r)
	})
}

// routeOrError sends requests the mux has no route for to a JSON 404 or
// 405 (the mux's own answers are plain text), and refuses paths with dot
// segments or empty segments: the mux would redirect them to their cleaned
// form, so "files/../../x" would silently become another route.
func (s *Server) routeOrError(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if seg, ok := uncleanSegment(r.URL.Path); ok {
			s.writeError(w, r, badRequest("path", "the URL path must not contain %q segments", seg))
			return
		}
		h, pattern := mux.Handler(r)
		if pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		// Let the mux decide between 404 and 405 (it sets Allow), then
		// answer in JSON.
		probe := &statusProbe{header: http.Header{}}
		h.ServeHTTP(probe, r)
		status := probe.status
		if status == 0 || status == http.StatusOK {
			status = http.StatusNotFound
		}
		if allow := probe.header.Get("Allow"); allow != "" {
			w.Header().Set("Allow", allow)
		}
		if status == http.StatusMethodNotAllowed {
			s.writeError(w, r, &requestError{status: status, err: skilld.Errorf(skilld.EINVALID,
				"method %s is not allowed on %s; allowed: %s", r.Method, r.URL.Path, probe.header.Get("Allow"))})
			return
		}
		s.writeError(w, r, skilld.Errorf(skilld.ENOTFOUND, "no route for %s %s; see %s", r.Method, r.URL.Path, OpenAPIPath))
	})
}

// uncleanSegment finds a ".", ".." or empty segment (a trailing slash is
// allowed, as the mux allows it).
func uncleanSegment(p string) (string, bool) {
	segs := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, seg := range segs {
		switch {
		case seg == "." || seg == "..":
			return seg, true
		case seg == "" && i != len(segs)-1:
			return "//", true
		}
	}
	return "", false
}

// statusProbe captures what the mux's not-found and not-allowed handlers
// would write.
type statusProbe struct {
	header http.Header
	status int
}

func (p *statusProbe) Header() http.Header         { return p.header }
func (p *statusProbe) Write(b []byte) (int, error) { return len(b), nil }
func (p *statusProbe) WriteHeader(status int)      { p.status = status }
