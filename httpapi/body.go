package httpapi

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/skilld/skilld"
)

// Defaults of the request body bounds (Server fields override them).
const (
	// DefaultBodyIdleTimeout is how long a request body may send nothing
	// before the request is answered 408: a slow link sends something
	// every few seconds, a stalled or hostile client does not.
	DefaultBodyIdleTimeout = 30 * time.Second
	// DefaultMaxBodyBytesInFlight bounds the request bodies read (or
	// reserved) at once, so that concurrent uploads cannot take the
	// server's memory.
	DefaultMaxBodyBytesInFlight = 256 << 20
	// bodyReserveWait is how long a request waits for room among the
	// bodies in flight before it is answered 503.
	bodyReserveWait = 10 * time.Second
)

func (s *Server) bodyIdle() time.Duration {
	if s.BodyIdleTimeout > 0 {
		return s.BodyIdleTimeout
	}
	return DefaultBodyIdleTimeout
}

// reserve holds room for the request's body among the bodies in flight:
// its declared length, or the route's limit when it declares none, until
// release. It waits a little for room, then refuses with 503.
func (s *Server) reserve(r *http.Request, rt Route) (release func(), err error) {
	s.inFlightOnce.Do(func() {
		limit := s.MaxBodyBytesInFlight
		if limit <= 0 {
			limit = DefaultMaxBodyBytesInFlight
		}
		s.inFlight = semaphore.NewWeighted(limit)
	})
	n := int64(MaxJSONBody)
	if rt.Body == BodyArchive {
		n = MaxArchiveBody
	}
	if r.ContentLength >= 0 && r.ContentLength < n {
		n = max(r.ContentLength, 1)
	}
	ctx, cancel := context.WithTimeout(r.Context(), bodyReserveWait)
	defer cancel()
	if err := s.inFlight.Acquire(ctx, n); err != nil {
		return nil, &requestError{status: http.StatusServiceUnavailable,
			err: skilld.Errorf(skilld.EUNAVAILABLE, "the server is reading too many request bodies at once; retry in a few seconds")}
	}
	return func() { s.inFlight.Release(n) }, nil
}

// stallGuard gives each read of a request body a deadline of idle from
// now: a body that stops sending fails the read with a timeout, which is
// answered 408, instead of holding the connection forever.
type stallGuard struct {
	io.ReadCloser
	rc     *http.ResponseController
	header http.Header
	idle   time.Duration
}

func (g *stallGuard) Read(p []byte) (int, error) {
	g.rc.SetReadDeadline(time.Now().Add(g.idle))
	n, err := g.ReadCloser.Read(p)
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		// The deadline stays: the server must not wait for the rest of
		// this body before it answers, nor reuse the connection.
		g.header.Set("Connection", "close")
		err = errBodyStalled{g.idle}
	case err != nil:
		g.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// errBodyStalled is a body that sent nothing for its idle time.
type errBodyStalled struct{ idle time.Duration }

func (e errBodyStalled) Error() string {
	return "the request body stalled: nothing arrived for " + e.idle.String()
}
