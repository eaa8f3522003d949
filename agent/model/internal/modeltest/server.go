// Package modeltest holds what the model adapters' tests share: a recording
// HTTP endpoint and a reader of a model's stream.
package modeltest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Server is a provider endpoint answering each POST to its path with the
// next reply (the last one repeats); it records what it was sent. It is
// closed when the test ends.
type Server struct {
	*httptest.Server

	mu      sync.Mutex
	replies []func(w http.ResponseWriter)
	bodies  []map[string]any
	headers []http.Header
}

// NewServer starts a Server answering POST path.
func NewServer(t *testing.T, path string, replies ...func(w http.ResponseWriter)) *Server {
	s := &Server{replies: replies}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != path {
			http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusTeapot)
			return
		}
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil {
			t.Errorf("request body is not JSON: %v", err)
		}
		s.mu.Lock()
		n := len(s.bodies)
		s.bodies = append(s.bodies, body)
		s.headers = append(s.headers, r.Header.Clone())
		s.mu.Unlock()
		s.replies[min(n, len(s.replies)-1)](w)
	}))
	t.Cleanup(s.Close)
	return s
}

// Requests is the number of requests received.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.bodies)
}

// Body is the JSON body of request i.
func (s *Server) Body(i int) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bodies[i]
}

// Header is the header of request i.
func (s *Server) Header(i int) http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.headers[i]
}
