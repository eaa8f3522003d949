// Package httpapi serves skilld over HTTP: the REST API, and health checks
// for load balancers and operators. Handlers are thin adapters over the
// service layer; this package maps error codes to statuses in one place.
package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/blob"
	"github.com/skilld/skilld/store"
)

// Server holds what the handlers need.
type Server struct {
	DB    store.Store
	Blobs blob.Store
	// Version is reported by /healthz.
	Version string
}

// Handler returns the HTTP handler of the whole API.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", s.healthz)
	return mux
}

// healthTimeout bounds a health check, so a hung backend makes the check
// fail instead of hang.
const healthTimeout = 5 * time.Second

// healthz reports whether the metadata and blob stores answer. It returns
// 503 naming the backend that does not, so an orchestrator can route around
// the process.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), healthTimeout)
	defer cancel()
	checks := map[string]string{"db": "ok", "blobs": "ok"}
	status := http.StatusOK
	if _, err := s.DB.WorkspaceList(ctx, &store.WorkspaceListParams{Page: store.Page{Limit: 1}}); err != nil {
		checks["db"], status = "unavailable: "+skilld.ErrorMessage(err), http.StatusServiceUnavailable
	}
	// Any digest works: a reachable store answers "not found".
	if _, err := s.Blobs.Stat(ctx, "sha256:"+zeroHex); err != nil && !errors.Is(err, blob.ErrNotFound) {
		checks["blobs"], status = "unavailable: "+skilld.ErrorMessage(err), http.StatusServiceUnavailable
	}
	body := map[string]any{"status": "ok", "version": s.Version, "checks": checks}
	if status != http.StatusOK {
		body["status"] = "unavailable"
	}
	writeJSON(w, status, body)
}

const zeroHex = "0000000000000000000000000000000000000000000000000000000000000000"

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}
