package s3blob

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/blob"
)

func TestTransient(t *testing.T) {
	refused := &url.Error{Op: "Get", URL: "http://x", Err: &net.OpError{Op: "dial", Net: "tcp",
		Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}}
	cases := []struct {
		err  error
		want bool
	}{
		{refused, true},
		{&url.Error{Op: "Get", URL: "http://x", Err: io.EOF}, true},
		{&url.Error{Op: "Get", URL: "http://x", Err: io.ErrUnexpectedEOF}, true},
		{fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{minio.ErrorResponse{StatusCode: 503, Code: "ServiceUnavailable"}, true},
		{minio.ErrorResponse{StatusCode: 500, Code: "InternalError"}, true},
		{minio.ErrorResponse{StatusCode: 429}, true},
		{minio.ErrorResponse{StatusCode: 503, Code: "SlowDown"}, true},
		{minio.ErrorResponse{StatusCode: 404, Code: "NoSuchKey"}, false},
		{minio.ErrorResponse{StatusCode: 403, Code: "AccessDenied"}, false},
		{minio.ErrorResponse{StatusCode: 400, Code: "InvalidRequest"}, false},
		{&url.Error{Op: "Get", URL: "https://x", Err: context.Canceled}, false},
		{context.DeadlineExceeded, false},
		{&url.Error{Op: "Get", URL: "https://x", Err: tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}}, false},
		{&url.Error{Op: "Get", URL: "https://x", Err: &tls.CertificateVerificationError{Err: errors.New("bad")}}, false},
		{errors.New("something else"), false},
	}
	for _, c := range cases {
		if got := transient(c.err); got != c.want {
			t.Errorf("transient(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func TestMapErrorHidesMinio(t *testing.T) {
	s := &Store{cfg: Config{Bucket: "b", Endpoint: "http://e"}, where: "s3://b/ at http://e"}
	d := blob.FormatDigest(digestHex("x"))
	cases := []struct {
		err      error
		code     string
		sentinel error
	}{
		{minio.ErrorResponse{StatusCode: 404, Code: "NoSuchKey"}, skilld.ENOTFOUND, blob.ErrNotFound},
		{minio.ErrorResponse{StatusCode: 403, Code: "AccessDenied"}, skilld.EINTERNAL, nil},
		{minio.ErrorResponse{StatusCode: 404, Code: "NoSuchBucket"}, skilld.EUNAVAILABLE, nil},
		{minio.ErrorResponse{StatusCode: 400, Code: "BadDigest"}, skilld.EINTEGRITY, blob.ErrIntegrity},
		{minio.ErrorResponse{StatusCode: 400, Code: "InvalidArgument"}, skilld.EINTERNAL, nil},
	}
	for _, c := range cases {
		err := s.mapError("stat", d, c.err)
		var er minio.ErrorResponse
		if skilld.ErrorCode(err) != c.code || errors.As(err, &er) {
			t.Errorf("mapError(%v) = %v (code %s), want code %s and no minio type", c.err, err, skilld.ErrorCode(err), c.code)
		}
		if c.sentinel != nil && !errors.Is(err, c.sentinel) {
			t.Errorf("mapError(%v) = %v, want it to wrap %v", c.err, err, c.sentinel)
		}
	}
}
