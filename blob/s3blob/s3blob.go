// Package s3blob stores blobs as objects in an S3-compatible bucket (AWS S3,
// MinIO, versitygw, Ceph, R2...) with github.com/minio/minio-go/v7, whose
// types never leave this package. Object keys are
//
//	<prefix>/sha256/ab/<64 hex>
//
// The two-hex-digit level keeps key order equal to digest order (so List
// needs no sorting) and spreads keys over prefixes, which S3 partitions on.
//
// Every request goes through one retry loop (blob/internal/retry, with the
// classification in errors.go): transient failures are retried with capped
// exponential backoff until the caller's context is done (or RetryLimit
// passes, for a context without deadline), and the error then is
// EUNAVAILABLE. minio's own retries are off so the two do not multiply.
package s3blob

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/blob"
	"github.com/skilld/skilld/blob/internal/blobio"
	"github.com/skilld/skilld/blob/internal/retry"
)

// Store is a blob.Store on an S3 bucket. It is safe for concurrent use.
type Store struct {
	cfg       Config
	core      minio.Core // Core: the plain client plus the single-request PutObject
	transport *http.Transport
	keyBase   string // "<prefix>/sha256/" or "sha256/"
	where     string // "s3://bucket/prefix at endpoint", for messages
	policy    retry.Policy
}

var _ blob.Store = (*Store)(nil)

// New connects to the bucket and checks that it exists, retrying transient
// failures within ctx. Configuration errors are EINVALID; a bucket that is
// missing or unreachable is EUNAVAILABLE.
func New(ctx context.Context, cfg Config) (*Store, error) {
	if err := cfg.normalize(); err != nil {
		return nil, skilld.Errorf(skilld.EINVALID, "s3 blob store: %v", err)
	}
	host, secure, _ := cfg.endpoint() // checked by normalize
	transport, err := minio.DefaultTransport(secure)
	if err != nil {
		return nil, skilld.Errorf(skilld.EINTERNAL, "s3 blob store: %v", err)
	}
	// An endpoint that accepts the request and then hangs is an attempt
	// that failed (and is retried within RetryLimit), not a wait without
	// end: minio's default is a minute.
	transport.ResponseHeaderTimeout = ResponseTimeout
	lookup := minio.BucketLookupPath
	if strings.HasSuffix(strings.Split(host, ":")[0], ".amazonaws.com") {
		lookup = minio.BucketLookupAuto // AWS prefers virtual-host style
	}
	client, err := minio.New(host, &minio.Options{
		Creds:        credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, cfg.SessionToken),
		Secure:       secure,
		Transport:    transport,
		Region:       cfg.Region,
		BucketLookup: lookup,
		// One attempt per call: our retry loop decides. (minio still
		// sleeps up to 200 ms after a retryable failure before it
		// returns; that adds to our backoff but changes nothing else.)
		MaxRetries: 1,
	})
	if err != nil {
		return nil, skilld.Errorf(skilld.EINVALID, "s3 blob store at %s: %v", cfg.Endpoint, err)
	}
	s := &Store{
		cfg:       cfg,
		core:      minio.Core{Client: client},
		transport: transport,
		keyBase:   blob.Algorithm + "/",
		where:     "s3://" + cfg.Bucket + "/" + cfg.Prefix + " at " + cfg.Endpoint,
		policy:    retry.Policy{Initial: 50 * time.Millisecond, Max: 2 * time.Second, Limit: cfg.RetryLimit},
	}
	if cfg.Prefix != "" {
		s.keyBase = cfg.Prefix + "/" + s.keyBase
	}
	var exists bool
	err = s.retry(ctx, func(ctx context.Context) (err error) {
		exists, err = client.BucketExists(ctx, cfg.Bucket)
		return err
	})
	if err != nil {
		transport.CloseIdleConnections()
		return nil, s.mapError("connect", "", err)
	}
	if !exists {
		transport.CloseIdleConnections()
		return nil, skilld.Errorf(skilld.EUNAVAILABLE, "s3 blob store: bucket %q does not exist at %s", cfg.Bucket, cfg.Endpoint)
	}
	removeStaleTemp(cfg.TempDir)
	return s, nil
}

// ObjectKey is the key of a blob's object in the bucket, for operators
// and tests that look at the bucket directly.
func (s *Store) ObjectKey(digest string) string {
	return s.key(strings.TrimPrefix(digest, blob.Algorithm+":"))
}

// key is the object key of a blob; hexSum must come from blob.ParseDigest.
func (s *Store) key(hexSum string) string {
	return s.keyBase + hexSum[:2] + "/" + hexSum
}

// retry runs op under the store's retry policy.
func (s *Store) retry(ctx context.Context, op func(ctx context.Context) error) error {
	return retry.Do(ctx, s.policy, transient, op)
}

// Open starts a GET of the blob and returns a reader that verifies it and
// resumes the transfer (with a range request) if the connection drops.
func (s *Store) Open(ctx context.Context, digest string) (io.ReadCloser, error) {
	hexSum, err := blob.ParseDigest(digest)
	if err != nil {
		return nil, err
	}
	key := s.key(hexSum)
	var body io.ReadCloser
	var info minio.ObjectInfo
	err = s.retry(ctx, func(ctx context.Context) (err error) {
		body, info, _, err = s.core.GetObject(ctx, s.cfg.Bucket, key, minio.GetObjectOptions{})
		return err
	})
	if err != nil {
		return nil, s.mapError("open", digest, err)
	}
	r := &resumingReader{s: s, ctx: ctx, digest: digest, key: key, etag: info.ETag, size: info.Size, body: body}
	return blobio.NewVerifier(ctx, r, digest, hexSum, info.Size), nil
}

// Stat describes the blob from a HEAD request.
func (s *Store) Stat(ctx context.Context, digest string) (blob.Info, error) {
	hexSum, err := blob.ParseDigest(digest)
	if err != nil {
		return blob.Info{}, err
	}
	info, err := s.stat(ctx, s.key(hexSum))
	if err != nil {
		return blob.Info{}, s.mapError("stat", digest, err)
	}
	return blob.Info{Digest: digest, Size: info.Size, ModTime: info.LastModified}, nil
}

func (s *Store) stat(ctx context.Context, key string) (info minio.ObjectInfo, err error) {
	err = s.retry(ctx, func(ctx context.Context) (err error) {
		info, err = s.core.StatObject(ctx, s.cfg.Bucket, key, minio.StatObjectOptions{})
		return err
	})
	return info, err
}

// Delete removes the object. S3 already answers a DELETE of a missing key
// with success; a NoSuchKey from a stricter server is accepted too.
func (s *Store) Delete(ctx context.Context, digest string) error {
	hexSum, err := blob.ParseDigest(digest)
	if err != nil {
		return err
	}
	err = s.retry(ctx, func(ctx context.Context) error {
		return s.core.RemoveObject(ctx, s.cfg.Bucket, s.key(hexSum), minio.RemoveObjectOptions{})
	})
	if err == nil {
		return nil
	}
	if err := s.mapError("delete", digest, err); !errors.Is(err, blob.ErrNotFound) {
		return err
	}
	return nil
}

// Close drops idle connections; requests in flight are not interrupted.
func (s *Store) Close() error {
	s.transport.CloseIdleConnections()
	return nil
}
