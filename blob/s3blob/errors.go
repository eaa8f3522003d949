package s3blob

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/blob/internal/blobio"
	"github.com/skilld/skilld/blob/internal/retry"
)

// transient reports whether an attempt may succeed if simply repeated: the
// server is overloaded or briefly failing (5xx, 429, SlowDown), or the
// network dropped (refused, reset, timed out, cut mid-response, DNS).
// Everything else (403, 404, 400, bad certificates) fails at once, because
// repeating it only delays the same answer.
func transient(err error) bool {
	var er minio.ErrorResponse
	if errors.As(err, &er) {
		switch er.Code {
		case "SlowDown", "SlowDownRead", "SlowDownWrite", "ServiceUnavailable",
			"InternalError", "RequestTimeout", "RequestTimeoutException", "Throttling":
			return true
		}
		return er.StatusCode >= 500 || er.StatusCode == http.StatusTooManyRequests ||
			er.StatusCode == http.StatusRequestTimeout
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false // the caller's decision, not the network's
	}
	// TLS trouble (bad certificate, https to an http server) is
	// configuration, however many times it is tried.
	var certErr *tls.CertificateVerificationError
	var recErr tls.RecordHeaderError
	var authErr x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	if errors.As(err, &certErr) || errors.As(err, &recErr) || errors.As(err, &authErr) || errors.As(err, &hostErr) {
		return false
	}
	// *url.Error is a net.Error too, so only its Timeout counts; socket
	// level failures (dial, read, write, DNS) are *net.OpError or
	// *net.DNSError.
	var netErr net.Error
	var opErr *net.OpError
	var dnsErr *net.DNSError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.As(err, &opErr) || errors.As(err, &dnsErr) ||
		(errors.As(err, &netErr) && netErr.Timeout())
}

// mapError turns a failure of op on the blob with digest ("" for List) into
// a *skilld.Error; no minio type escapes the package, but the original error
// stays reachable through Err for logs.
func (s *Store) mapError(op, digest string, err error) error {
	what := op
	if digest != "" {
		what = op + " blob " + digest
	}
	var give *retry.GiveUpError
	if errors.As(err, &give) {
		last := "no attempt made"
		if give.Last != nil {
			last = "last error: " + give.Last.Error()
		}
		return &skilld.Error{
			Code: skilld.EUNAVAILABLE,
			Message: fmt.Sprintf("%s: blob storage %s unavailable after %d attempts in %v (%s)",
				what, s.where, give.Attempts, give.Elapsed.Round(time.Millisecond), last),
			Err: &retry.GiveUpError{Attempts: give.Attempts, Elapsed: give.Elapsed, Last: hide(give.Last), Cause: give.Cause},
		}
	}
	var se *skilld.Error
	if errors.As(err, &se) {
		return err
	}
	var er minio.ErrorResponse
	if errors.As(err, &er) {
		switch {
		case er.Code == "NoSuchBucket":
			return skilld.Errorf(skilld.EUNAVAILABLE, "%s: bucket %q does not exist at %s: %w",
				what, s.cfg.Bucket, s.cfg.Endpoint, plain(err))
		case er.Code == "NoSuchKey" || er.StatusCode == http.StatusNotFound:
			return blobio.NotFound(digest, plain(err))
		case er.Code == "BadDigest" || er.Code == "XAmzContentSHA256Mismatch":
			return blobio.Integrity(digest, "the server received different bytes than were sent ("+er.Code+")")
		case er.StatusCode == http.StatusForbidden || er.Code == "AccessDenied" ||
			er.Code == "InvalidAccessKeyId" || er.Code == "SignatureDoesNotMatch":
			// Internal, not forbidden: the caller is not the one refused,
			// this server's credentials are, and only its operator can
			// fix that.
			return skilld.Errorf(skilld.EINTERNAL, "%s: blob storage %s refused access (%s); check the credentials: %w",
				what, s.where, er.Code, plain(err))
		}
	}
	return skilld.Errorf(skilld.EINTERNAL, "%s: blob storage %s: %w", what, s.where, hide(err))
}

// plainError keeps an S3 error's text for logs while hiding its minio type
// from errors.As in callers.
type plainError struct{ msg string }

func (e *plainError) Error() string { return e.msg }

func plain(err error) error { return &plainError{msg: err.Error()} }

// hide flattens err if a minio type is in its chain and keeps it otherwise,
// so that standard errors (syscall.ECONNREFUSED, context errors) stay
// visible to errors.Is.
func hide(err error) error {
	var er minio.ErrorResponse
	if err != nil && errors.As(err, &er) {
		return plain(err)
	}
	return err
}
