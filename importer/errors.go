package importer

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/skilld/skilld"
)

// statusError maps a non-2xx GitHub answer to a typed error. Server errors
// come back as *transient, to be retried. The token never appears: messages
// are built from the status, the repository and GitHub's own message only.
func (g *GitHub) statusError(resp *http.Response, req request) error {
	gh := githubMessage(resp)
	var e *skilld.Error
	switch code := resp.StatusCode; {
	case code == http.StatusNotFound:
		e = skilld.Errorf(skilld.ENOTFOUND, "%s", req.notFound)
	case code == http.StatusUnauthorized:
		if g.Token != "" {
			e = skilld.Errorf(skilld.EUNAUTHORIZED, "GitHub rejected the configured token (401) for %s", req.repo)
		} else {
			e = skilld.Errorf(skilld.EUNAUTHORIZED, "GitHub requires authentication (401) for %s; configure a token", req.repo)
		}
	case code == http.StatusTooManyRequests || code == http.StatusForbidden && rateLimited(resp.Header):
		e = g.rateLimitError(resp.Header, req.repo, time.Now())
	case code == http.StatusForbidden:
		e = skilld.Errorf(skilld.EFORBIDDEN, "GitHub refused access to %s (403)", req.repo)
		if gh != "" {
			e.Message += ": " + gh
		}
	case code >= 500:
		return &transient{skilld.Errorf(skilld.EUNAVAILABLE, "GitHub is unavailable: it answered %d %s for %s",
			code, http.StatusText(code), req.repo)}
	case code == http.StatusBadRequest || code == http.StatusUnprocessableEntity:
		e = skilld.Errorf(skilld.EINVALID, "GitHub refused the request for %s (%d)", req.repo, code)
	default:
		e = skilld.Errorf(skilld.EUNAVAILABLE, "GitHub answered an unexpected %d %s for %s", code, http.StatusText(code), req.repo)
	}
	if gh != "" {
		e.Details = append(e.Details, skilld.Detail{Field: "github", Message: gh})
	}
	return e
}

// rateLimited tells a rate-limit 403 from a permission 403: GitHub sets
// X-RateLimit-Remaining to 0 for the primary limit and Retry-After for the
// secondary ("abuse") limits.
func rateLimited(h http.Header) bool {
	return h.Get("X-RateLimit-Remaining") == "0" || h.Get("Retry-After") != ""
}

// rateLimitError says when the caller may try again and, as Details, what
// GitHub reported, so clients can schedule a retry without parsing text.
func (g *GitHub) rateLimitError(h http.Header, repo string, now time.Time) *skilld.Error {
	var when string
	var details []skilld.Detail
	if v := h.Get("Retry-After"); v != "" {
		details = append(details, skilld.Detail{Field: "retry_after", Message: v})
		if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
			when = fmt.Sprintf("retry after %d seconds", secs)
		} else if t, err := http.ParseTime(v); err == nil {
			when = "retry after " + t.UTC().Format(time.RFC3339)
		}
	}
	if v := h.Get("X-RateLimit-Reset"); v != "" {
		details = append(details, skilld.Detail{Field: "rate_limit_reset", Message: v})
		if secs, err := strconv.ParseInt(v, 10, 64); err == nil && when == "" {
			reset := time.Unix(secs, 0).UTC()
			when = "the limit resets at " + reset.Format(time.RFC3339)
			if wait := reset.Sub(now).Round(time.Second); wait > 0 {
				when += " (in " + wait.String() + ")"
			}
		}
	}
	for _, k := range [][2]string{
		{"X-RateLimit-Limit", "rate_limit"},
		{"X-RateLimit-Remaining", "rate_limit_remaining"},
		{"X-RateLimit-Resource", "rate_limit_resource"},
	} {
		if v := h.Get(k[0]); v != "" {
			details = append(details, skilld.Detail{Field: k[1], Message: v})
		}
	}
	if when == "" {
		when = "try again later"
	}
	msg := "GitHub API rate limit exceeded while fetching " + repo + "; " + when
	if g.Token == "" {
		msg += "; a configured GitHub token gets a higher limit"
	}
	return &skilld.Error{Code: skilld.ERATELIMITED, Message: msg, Details: details}
}

// githubMessage is the "message" of GitHub's JSON error body, if any. It is
// GitHub's text about the request, so it is safe and useful to pass on.
func githubMessage(resp *http.Response) string {
	var body struct {
		Message string `json:"message"`
	}
	if json.NewDecoder(io.LimitReader(resp.Body, maxErrorBody)).Decode(&body) != nil {
		return ""
	}
	m := strings.TrimSpace(body.Message)
	if len(m) > 300 {
		m = m[:300] + "…"
	}
	return m
}

// unavailable is the EUNAVAILABLE error for a failure to talk to GitHub.
// The cause (a client error, already redacted) is kept for logs only.
func unavailable(repo, what string, cause error) error {
	return &skilld.Error{
		Code:    skilld.EUNAVAILABLE,
		Message: what + " while fetching " + repo,
		Err:     cause,
	}
}

// canceled reports a context that ended during an import. It keeps the
// context's error in the chain for errors.Is, and is EUNAVAILABLE because
// that is what a deadline means to the caller: GitHub did not answer in time.
func canceled(repo string, err error) error {
	return skilld.Errorf(skilld.EUNAVAILABLE, "fetching %s stopped: %w", repo, err)
}

// sizeLimit renders a byte limit the way messages state it: the exact
// number, and MiB when it is a whole number of them.
func sizeLimit(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d-byte (%d MiB)", n, n>>20)
	}
	return fmt.Sprintf("%d-byte", n)
}

func quoteRef(ref string) string { return strconv.Quote(ref) }
