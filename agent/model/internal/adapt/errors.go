// Package adapt holds what the provider adapters share and what must behave
// the same in each: how an HTTP outcome becomes a *skilld.Error, how secrets
// are kept out of messages, and how tool-call arguments are kept valid JSON.
// It knows nothing of either SDK, so no vendor type passes through it.
package adapt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/model"
)

// maxErrorBody caps how much of an error response is kept: enough for any
// provider's JSON error, not enough for a proxy's HTML page to matter.
const maxErrorBody = 64 << 10

// Recorder watches the attempts of one call through an SDK middleware. The
// SDKs retry inside one method call, so only a middleware sees how many
// attempts there were and what the last one answered; the error an SDK
// finally returns does not always carry the status (a body it cannot parse,
// a context that ended while it waited to retry).
//
// A Recorder belongs to one call and is used from one goroutine: the SDKs run
// the middleware chain of a call sequentially.
type Recorder struct {
	Attempts int
	// Status is the last attempt's HTTP status, 0 when it got no response.
	Status int
	// Body is the last error response's body (status >= 400), capped.
	Body []byte

	// OnRetry, when set, is told of every attempt after the first as it
	// starts, with what ended the one before (see model.Retry). Provider
	// and MaxAttempts fill in what it is told; APIKey is redacted from it.
	OnRetry     func(model.Retry)
	Provider    string
	MaxAttempts int
	APIKey      string
	// reason and ended describe the last attempt, for the next one's
	// report.
	reason string
	ended  time.Time
}

// Middleware has the shape of both SDKs' option.Middleware (they are type
// aliases of this function type), so the adapters pass it as is.
func (r *Recorder) Middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	// The SDKs call the middleware once per attempt, after waiting out
	// the backoff: a second call is a retry starting now.
	if r.Attempts > 0 && r.OnRetry != nil {
		r.OnRetry(model.Retry{Provider: r.Provider, Attempt: r.Attempts + 1, Attempts: r.MaxAttempts, Status: r.Status,
			Reason: r.reason, Waited: time.Since(r.ended)})
	}
	res, err := next(req)
	r.Attempts++
	r.ended = time.Now()
	r.Status, r.Body = 0, nil
	if res == nil {
		r.reason = Redact(unwrapURL(err).Error(), r.APIKey)
		return res, err
	}
	r.Status = res.StatusCode
	r.reason = strings.TrimSpace(fmt.Sprintf("HTTP %d %s", res.StatusCode, http.StatusText(res.StatusCode)))
	if res.StatusCode >= 400 && res.Body != nil {
		// Read the body and hand the SDK an identical copy, so both it and
		// the error mapping see the provider's message.
		body, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
		_ = res.Body.Close()
		r.Body = body
		res.Body = io.NopCloser(bytes.NewReader(body))
		if msg := MessageFromBody(body); msg != "" {
			r.reason += ": " + Redact(msg, r.APIKey)
		}
	}
	return res, err
}

// Failed records that the last attempt failed after its response began
// (an error event inside a 200 stream), for a caller that starts the call
// again with this recorder: the next attempt reports reason.
func (r *Recorder) Failed(reason string) {
	r.reason = Redact(reason, r.APIKey)
	r.ended = time.Now()
}

// unwrapURL returns the cause inside a *url.Error ("dial tcp …:
// connection refused" rather than `Post "https://…": dial tcp …`).
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err
	}
	if err == nil {
		return errors.New("no response")
	}
	return err
}

// Failure is what an adapter knows about a failed call.
type Failure struct {
	Provider string // "openai", "anthropic": the first word of every message
	APIKey   string // redacted from every message
	Err      error  // what the SDK returned
	// Message is the provider's own error message when the adapter could
	// read it from the SDK's error type ("" otherwise: it is then taken
	// from the recorded body).
	Message string
	// Status is the HTTP status the SDK's error carries (0: none); the
	// recorder's is used when this is 0.
	Status   int
	Recorder *Recorder
	// Ctx is the call's context: when it has ended, that is the cause.
	Ctx context.Context
}

// Classify maps a failed call to a *skilld.Error with the codes of
// model.Model.Generate. The SDK's error is never kept as the cause: its
// Error() may include response bodies (OpenAI's 401 echoes a masked key) and
// errors.As on it would let a vendor type out of its adapter.
func (f Failure) Classify() error {
	attempts := 0
	status := f.Status
	var body []byte
	if f.Recorder != nil {
		attempts = f.Recorder.Attempts
		if status == 0 {
			status = f.Recorder.Status
		}
		body = f.Recorder.Body
	}
	tries := ""
	if attempts > 1 {
		tries = fmt.Sprintf(" after %d attempts", attempts)
	}
	if f.Ctx != nil && f.Ctx.Err() != nil {
		cause := context.Cause(f.Ctx)
		if status == http.StatusTooManyRequests {
			return &skilld.Error{Code: skilld.ERATELIMITED, Err: cause,
				Message: fmt.Sprintf("%s: rate limited (HTTP 429)%s; stopped waiting to retry: %v", f.Provider, tries, cause)}
		}
		return &skilld.Error{Code: skilld.EUNAVAILABLE, Err: cause,
			Message: fmt.Sprintf("%s: request ended: %v", f.Provider, cause)}
	}
	if status >= 400 {
		msg := f.Message
		if msg == "" {
			msg = MessageFromBody(body)
		}
		return StatusError(f.Provider, status, Redact(msg, f.APIKey), tries)
	}
	// No HTTP error: the connection failed, or the stream broke after a 200.
	msg := Redact(f.Err.Error(), f.APIKey)
	// Keep a standard-library cause (for errors.Is/As and logs) but never
	// an SDK error type, which must not leave its adapter.
	var cause error
	var netErr net.Error
	what := "the answer could not be read"
	switch {
	case errors.As(f.Err, &netErr):
		cause, what = netErr, "cannot reach the server"
	case errors.Is(f.Err, io.ErrUnexpectedEOF):
		cause, what = io.ErrUnexpectedEOF, "the stream broke off"
	}
	return &skilld.Error{Code: skilld.EUNAVAILABLE, Err: cause,
		Message: fmt.Sprintf("%s: %s%s: %s", f.Provider, what, tries, msg)}
}

// StatusError maps an HTTP status the provider answered (after retries) to a
// *skilld.Error. msg is the provider's message, already redacted; tries
// says how many attempts were made, or is empty.
func StatusError(provider string, status int, msg, tries string) *skilld.Error {
	text := http.StatusText(status)
	detail := ""
	if msg != "" {
		detail = ": " + msg
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		what := "the API key was rejected"
		if status == http.StatusForbidden {
			what = "the API key was rejected or lacks permission"
		}
		return skilld.Errorf(skilld.EUNAUTHORIZED, "%s: %s (HTTP %d %s)%s", provider, what, status, text, detail)
	case status == http.StatusTooManyRequests:
		return skilld.Errorf(skilld.ERATELIMITED, "%s: rate limited (HTTP 429)%s%s", provider, tries, detail)
	case status == http.StatusRequestEntityTooLarge:
		return skilld.Errorf(skilld.ETOOLARGE, "%s: request too large (HTTP 413)%s", provider, detail)
	case status >= 500 || status == http.StatusRequestTimeout || status == http.StatusConflict:
		// The statuses the SDKs retry: after the retries the provider is
		// unavailable rather than the request wrong.
		return skilld.Errorf(skilld.EUNAVAILABLE, "%s: unavailable (HTTP %d %s)%s%s", provider, status, text, tries, detail)
	default:
		// 400, 404 (unknown model), 422 and the rest: the request as sent
		// is refused and sending it again will not help.
		return skilld.Errorf(skilld.EINVALID, "%s: request refused (HTTP %d %s)%s", provider, status, text, detail)
	}
}

// MessageFromBody reads the message out of an error body in the shapes
// OpenAI, Anthropic and the OpenAI-compatible servers use:
// {"error":{"message":…}}, {"error":"…"}, {"message":…} (vLLM) and
// {"detail":…} (FastAPI-based servers). Other bodies give their first line.
func MessageFromBody(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &v) == nil {
		var nested struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(v.Error, &nested) == nil && nested.Message != "":
			return nested.Message
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			return s
		case v.Message != "":
			return v.Message
		case json.Unmarshal(v.Detail, &s) == nil && s != "":
			return s
		case len(v.Detail) > 0:
			return string(v.Detail)
		}
		return ""
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(body)), "\n")
	if len(line) > 300 {
		line = line[:300] + "…"
	}
	return line
}

// keyLike matches strings shaped like provider API keys (sk-…, sk-ant-…,
// also when a provider masks their middle with asterisks), so a key never
// reaches an error message even when it is not the configured one.
var keyLike = regexp.MustCompile(`\bsk-[A-Za-z0-9_\-*]{4,}`)

// Redact removes key and anything shaped like an API key from s.
func Redact(s, key string) string {
	if key != "" {
		s = strings.ReplaceAll(s, key, "[redacted]")
	}
	return keyLike.ReplaceAllString(s, "[redacted]")
}
