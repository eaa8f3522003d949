package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// MetricsPath is where the server serves its Prometheus metrics when
// Server.Metrics is set.
const MetricsPath = "/metrics"

// Metrics records what the API serves. metrics.Metrics is one; the
// interface keeps Prometheus out of this package.
type Metrics interface {
	// ObserveRequest records a finished request by its route pattern
	// ("GET /v1/workspaces/{ws}/skills"; "" when no route matched).
	ObserveRequest(method, route string, status int, d time.Duration)
	// ObserveError sees the code of every error response the server
	// wrote for a client that was still there (source "api"), with the
	// storage backend that raised it (skilld.ErrorBackend, "" for none);
	// the recorder picks the codes it counts.
	ObserveError(source, backend, code string)
	// Handler serves the metrics in the Prometheus text format.
	Handler() http.Handler
}

// observeRequests times each request into Metrics and, with a Tracer,
// makes its span, which handlers (and tasks they start) see in the
// request's context. It sits inside logRequests, so the request id is
// already in the context.
func (s *Server) observeRequests(next http.Handler) http.Handler {
	if s.Metrics == nil && s.Tracer == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, outer *http.Request) {
		start := time.Now()
		r := outer
		var span trace.Span
		if s.Tracer != nil {
			ctx, sp := s.Tracer.Start(r.Context(), r.Method, trace.WithSpanKind(trace.SpanKindServer),
				trace.WithAttributes(attribute.String("http.request.method", r.Method), attribute.String("url.path", r.URL.Path),
					attribute.String("skilld.request_id", requestID(r))))
			span = sp
			r = r.WithContext(ctx)
		}
		rec := &recorder{ResponseWriter: w}
		defer func() {
			// The mux sets the pattern on the request it was given, our
			// copy; logRequests reads it from its own.
			outer.Pattern = r.Pattern
			status := rec.status
			if status == 0 {
				status = http.StatusOK // nothing written: net/http answers 200
			}
			if s.Metrics != nil {
				s.Metrics.ObserveRequest(r.Method, r.Pattern, status, time.Since(start))
			}
			if span != nil {
				if r.Pattern != "" {
					span.SetName(r.Pattern)
					span.SetAttributes(attribute.String("http.route", r.Pattern))
				}
				span.SetAttributes(attribute.Int("http.response.status_code", status))
				if status >= 500 {
					span.SetStatus(codes.Error, strconv.Itoa(status))
				}
				span.End()
			}
		}()
		next.ServeHTTP(rec, r)
	})
}
