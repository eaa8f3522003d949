// Package httpapi serves skilld over HTTP: the REST API, and health checks
// for load balancers and operators. Handlers are thin adapters over the
// service layer; this package maps error codes to statuses in one place.
package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"
	"golang.org/x/sync/semaphore"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/internal/authlimit"
	"github.com/skilld/skilld/internal/streamlimit"
	"github.com/skilld/skilld/service"
)

// Server holds what the handlers need.
type Server struct {
	// Service runs every operation of the API.
	Service *service.Service
	// Version is reported by /healthz and the OpenAPI document.
	Version string
	// Logger receives one line per request and the details of internal
	// errors; nil means slog.Default().
	Logger *slog.Logger
	// Watcher, when set, tells event streams about new entries of tasks
	// running in this process, so they need not wait for the next poll.
	Watcher Watcher
	// Streams, when set, bounds the task event streams open at once, per
	// token (429) and in all (503), and ends them with a "shutdown" event
	// once closed; the web UI's task streams share it.
	Streams *streamlimit.Limiter
	// BodyIdleTimeout and MaxBodyBytesInFlight bound request bodies
	// (defaults DefaultBodyIdleTimeout and DefaultMaxBodyBytesInFlight).
	BodyIdleTimeout      time.Duration
	MaxBodyBytesInFlight int64
	// PublicDiscovery serves the Agent Skills discovery index of the
	// workspace "default" at /.well-known/agent-skills/index.json without a
	// token (skilld serve --public-discovery). Off by default.
	PublicDiscovery bool
	// Metrics, when set, records every request and serves GET /metrics
	// (unauthenticated, like /healthz: scrapers carry no token).
	Metrics Metrics
	// Tracer, when set, makes a span per request, the parent of the
	// spans of tasks it starts.
	Tracer trace.Tracer
	// Mounts are other handlers served beside the API by path pattern
	// (the MCP endpoint), behind the same request ids, logging, metrics
	// and panic recovery; they authenticate themselves.
	Mounts map[string]http.Handler
	// Degraded, when set, says what the server is short of (disk space,
	// file descriptors: headroom.Monitor), none when it has headroom;
	// /healthz then answers "degraded" with the reasons.
	Degraded func() []string

	// AuthFailuresPerAddress failed token checks from one client address
	// per AuthFailureWindow are answered 401; after them the address gets
	// 429 with Retry-After until the window ends, without a token lookup,
	// except for tokens that authenticated recently (defaults
	// DefaultAuthFailuresPerAddress and DefaultAuthFailureWindow).
	AuthFailuresPerAddress int
	AuthFailureWindow      time.Duration
	// AuthLimit, when set, is the limiter used in place of one made from
	// the two fields above: serve shares one with the MCP endpoint and
	// the web UI, so a guesser gains nothing by switching surfaces.
	AuthLimit *authlimit.Limiter

	authOnce     sync.Once
	inFlightOnce sync.Once
	inFlight     *semaphore.Weighted
}

// Handler returns the HTTP handler of the whole API: the route table on a
// ServeMux, behind request logging and panic recovery.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range Routes() {
		pattern := rt.Method + " " + rt.Pattern
		switch {
		case rt.Pattern == HealthPath:
			mux.HandleFunc(pattern, s.healthz)
		case rt.Pattern == OpenAPIPath:
			mux.Handle(pattern, s.openAPIHandler())
		default:
			mux.Handle(pattern, s.operation(rt))
		}
	}
	if s.Metrics != nil {
		mux.Handle("GET "+MetricsPath, s.Metrics.Handler())
	}
	for pattern, h := range s.Mounts {
		mux.Handle(pattern, h)
	}
	if s.PublicDiscovery {
		s.publicDiscovery(mux)
	}
	return s.logRequests(s.observeRequests(s.recoverPanics(s.acceptGzip(s.routeOrError(mux)))))
}

// slogLevel is the level of a request's log line: server failures stand
// out, everything else is routine.
func slogLevel(status int) slog.Level {
	if status >= 500 {
		return slog.LevelWarn
	}
	return slog.LevelInfo
}

// healthTimeout bounds a health check, so a hung backend makes the check
// fail instead of hang.
const healthTimeout = 5 * time.Second

// healthz reports whether the metadata and blob stores answer. It returns
// 503 naming the backend that does not, so an orchestrator can route around
// the process. A server that answers but is short of disk space or file
// descriptors is "degraded", still 200: it serves, and an operator should
// act before it stops.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), healthTimeout)
	defer cancel()
	checks := map[string]string{"db": "ok", "blobs": "ok"}
	status := http.StatusOK
	h := s.Service.Ping(ctx)
	if h.DB != nil {
		checks["db"], status = "unavailable: "+skilld.ErrorMessage(h.DB), http.StatusServiceUnavailable
	}
	if h.Blobs != nil {
		checks["blobs"], status = "unavailable: "+skilld.ErrorMessage(h.Blobs), http.StatusServiceUnavailable
	}
	body := map[string]any{"status": "ok", "version": s.Version, "checks": checks}
	if status != http.StatusOK {
		body["status"] = "unavailable"
	}
	if s.Degraded != nil {
		if short := s.Degraded(); len(short) > 0 {
			body["degraded"] = short
			if status == http.StatusOK {
				body["status"] = "degraded"
			}
		}
	}
	writeJSON(w, status, body)
}
