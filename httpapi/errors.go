package httpapi

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/internal/exhaust"
)

// ErrorBody is the JSON shape of every error response:
// {"error":{"code":"…","message":"…","details":[{"field":"…","message":"…"}]}}.
type ErrorBody struct {
	Error ErrorObject `json:"error"`
}

// ErrorObject is the error inside ErrorBody.
type ErrorObject struct {
	Code    string          `json:"code" jsonschema:"not_found, invalid, conflict, forbidden, unauthorized, too_large, rate_limited, unavailable, integrity or internal"`
	Message string          `json:"message" jsonschema:"what went wrong, for people"`
	Details []skilld.Detail `json:"details,omitempty" jsonschema:"the fields at fault, when known"`
}

// StatusOf is the one place where error codes become HTTP statuses, for
// every surface that answers over HTTP (the API, the web UI). EINVALID is
// 422: the request was understood and the service refused its content. A
// request that cannot be decoded at all is a requestError with its own
// status (400, 413, 415).
func StatusOf(code string) int {
	switch code {
	case skilld.ENOTFOUND:
		return http.StatusNotFound
	case skilld.EINVALID:
		return http.StatusUnprocessableEntity
	case skilld.ECONFLICT:
		return http.StatusConflict
	case skilld.EFORBIDDEN:
		return http.StatusForbidden
	case skilld.EUNAUTHORIZED:
		return http.StatusUnauthorized
	case skilld.ETOOLARGE:
		return http.StatusRequestEntityTooLarge
	case skilld.ERATELIMITED:
		return http.StatusTooManyRequests
	case skilld.EUNAVAILABLE:
		return http.StatusServiceUnavailable
	case skilld.EQUOTA:
		// WebDAV's answer to a quota: the server cannot store more for
		// this client.
		return http.StatusInsufficientStorage
	}
	return http.StatusInternalServerError
}

// codeOfStatus maps a status back to a code, for responses that did not
// come with an error body (a proxy's 502, say).
func codeOfStatus(status int) string {
	switch status {
	case http.StatusBadRequest, http.StatusUnprocessableEntity, http.StatusUnsupportedMediaType, http.StatusMethodNotAllowed:
		return skilld.EINVALID
	case http.StatusUnauthorized:
		return skilld.EUNAUTHORIZED
	case http.StatusForbidden:
		return skilld.EFORBIDDEN
	case http.StatusNotFound:
		return skilld.ENOTFOUND
	case http.StatusConflict:
		return skilld.ECONFLICT
	case http.StatusRequestEntityTooLarge:
		return skilld.ETOOLARGE
	case http.StatusTooManyRequests:
		return skilld.ERATELIMITED
	case http.StatusInsufficientStorage:
		return skilld.EQUOTA
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return skilld.EUNAVAILABLE
	}
	return skilld.EINTERNAL
}

// requestError is a request that could not be decoded (malformed JSON, a
// wrong type, an unknown field, a body over the limit): its status is not
// derived from the code, so that "invalid" is 400 here and 422 when the
// service refuses a well-formed request.
type requestError struct {
	status int
	err    *skilld.Error
}

func (e *requestError) Error() string { return e.err.Error() }
func (e *requestError) Unwrap() error { return e.err }

// badRequest returns a 400 naming the parameter at fault (field may be "").
func badRequest(field, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	e := &skilld.Error{Code: skilld.EINVALID, Message: msg}
	if field != "" {
		e.Details = []skilld.Detail{{Field: field, Message: msg}}
	}
	return &requestError{status: http.StatusBadRequest, err: e}
}

// tooLarge returns a 413 for a body over its limit.
func tooLarge(limit int64, what string) error {
	return &requestError{status: http.StatusRequestEntityTooLarge, err: skilld.Errorf(skilld.ETOOLARGE,
		"request body is over the %s limit for %s", formatMiB(limit), what)}
}

func formatMiB(n int64) string {
	if n%(1<<20) == 0 {
		return strconv.FormatInt(n>>20, 10) + " MiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// unauthorized is the error for a request without a usable token.
func unauthorized(format string, args ...any) error {
	return skilld.Errorf(skilld.EUNAUTHORIZED, format, args...)
}

// writeError writes err as the JSON error body with its status. Internal
// errors are logged in full and shown to the client only as a generic
// message with the request ID, so nothing about the server leaks.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var status int
	obj := ErrorObject{}
	if re := (*requestError)(nil); errors.As(err, &re) {
		status, obj.Code, obj.Message, obj.Details = re.status, re.err.Code, re.err.Message, re.err.Details
	} else {
		if skilld.ErrorCode(err) == skilld.EINTERNAL {
			// Out of disk or descriptors somewhere no store said so (an
			// upload's temporary file, say): not a bug, and worth a retry.
			err = exhaust.Unavailable(err, "the server")
		}
		obj.Code = skilld.ErrorCode(err)
		status = StatusOf(obj.Code)
		obj.Message, obj.Details = skilld.ErrorMessage(err), skilld.ErrorDetails(err)
	}
	if obj.Code == skilld.EINTEGRITY {
		// Damaged stored data: the message names what, and the log keeps
		// the digest for the operator.
		s.logger().ErrorContext(r.Context(), "stored data is damaged", "request_id", requestID(r), "method", r.Method,
			"path", r.URL.Path, "error", err.Error())
	} else if status == http.StatusInternalServerError {
		gone := r.Context().Err() != nil && errors.Is(err, context.Canceled)
		if gone {
			// The client went away; its request was not at fault and no
			// one reads this answer, so it is not logged as a server error.
			status, obj.Code = http.StatusServiceUnavailable, skilld.EUNAVAILABLE
			obj.Message, obj.Details = "request canceled", nil
		} else {
			s.logger().ErrorContext(r.Context(), "internal error", "request_id", requestID(r), "method", r.Method,
				"path", r.URL.Path, "error", err.Error())
			obj.Code, obj.Details = skilld.EINTERNAL, nil
			obj.Message = "internal error; the server log has the details under request id " + requestID(r)
		}
	}
	h := w.Header()
	switch status {
	case http.StatusUnauthorized:
		h.Set("WWW-Authenticate", `Bearer realm="skilld"`)
	case http.StatusTooManyRequests:
		if after := retryAfter(obj.Details, time.Now()); after != "" {
			h.Set("Retry-After", after)
		}
	case http.StatusServiceUnavailable:
		// Storage or a backend is briefly out (a database restarting, the
		// body budget spent): worth retrying, and worth an operator's
		// attention when it is not the client going away.
		h.Set("Retry-After", cmp.Or(retryAfter(obj.Details, time.Now()), DefaultRetryAfter))
		if r.Context().Err() == nil {
			s.logger().WarnContext(r.Context(), "unavailable", "request_id", requestID(r), "method", r.Method,
				"path", r.URL.Path, "backend", cmp.Or(skilld.ErrorBackend(err), "none"), "error", err.Error(), "cause", errors.Unwrap(err))
		}
	}
	if s.Metrics != nil && r.Context().Err() == nil {
		s.Metrics.ObserveError("api", skilld.ErrorBackend(err), obj.Code)
	}
	writeJSON(w, status, ErrorBody{Error: obj})
}

// DefaultRetryAfter is the Retry-After of a 503 whose cause gave none, in
// seconds: long enough for a database failover to finish most of the way.
const DefaultRetryAfter = "5"

// RetryAfterOf is the Retry-After an error asks for ("" when it names
// none), for surfaces that write their own error answers (the web UI).
func RetryAfterOf(err error) string { return retryAfter(skilld.ErrorDetails(err), time.Now()) }

// retryAfter derives a Retry-After value from what a rate-limited backend
// reported (the importer passes GitHub's retry_after and rate_limit_reset
// as details).
func retryAfter(details []skilld.Detail, now time.Time) string {
	for _, d := range details {
		if d.Field == "retry_after" && d.Message != "" {
			return d.Message // seconds or an HTTP date, as Retry-After itself
		}
	}
	for _, d := range details {
		if d.Field != "rate_limit_reset" {
			continue
		}
		if secs, err := strconv.ParseInt(d.Message, 10, 64); err == nil {
			return strconv.FormatInt(max(int64(time.Unix(secs, 0).Sub(now).Seconds()+0.999), 1), 10)
		}
	}
	return ""
}

func (s *Server) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}
