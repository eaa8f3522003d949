package s3blob

import (
	"context"
	"io"

	"github.com/minio/minio-go/v7"
)

// resumingReader reads an object's body and, when the connection fails
// mid-transfer, asks for the rest with a range request pinned to the same
// ETag, so that a 50 MB download does not start over (or fail) because of
// one reset. It stops when the caller's context is done.
type resumingReader struct {
	s      *Store
	ctx    context.Context
	digest string
	key    string
	etag   string
	size   int64
	off    int64 // bytes delivered so far
	body   io.ReadCloser
}

func (r *resumingReader) Read(p []byte) (int, error) {
	for {
		n, err := r.body.Read(p)
		r.off += int64(n)
		if err == nil || err == io.EOF || !transient(err) || r.ctx.Err() != nil {
			if err != nil && err != io.EOF {
				err = r.s.mapError("read", r.digest, err)
			}
			return n, err
		}
		if r.off >= r.size {
			// Everything announced has arrived; let the verifier judge it.
			return n, io.EOF
		}
		if rerr := r.reopen(); rerr != nil {
			return n, rerr
		}
		if n > 0 {
			return n, nil
		}
	}
}

// reopen replaces the failed body with a GET of the bytes from r.off on.
func (r *resumingReader) reopen() error {
	r.body.Close()
	opts := minio.GetObjectOptions{}
	if r.off > 0 { // SetRange(0, 0) would ask for one byte
		if err := opts.SetRange(r.off, 0); err != nil {
			return r.s.mapError("read", r.digest, err)
		}
	}
	if r.etag != "" {
		// If the object was replaced meanwhile, fail instead of splicing
		// two objects together.
		if err := opts.SetMatchETag(r.etag); err != nil {
			return r.s.mapError("read", r.digest, err)
		}
	}
	var body io.ReadCloser
	err := r.s.retry(r.ctx, func(ctx context.Context) (err error) {
		body, _, _, err = r.s.core.GetObject(ctx, r.s.cfg.Bucket, r.key, opts)
		return err
	})
	if err != nil {
		r.body = io.NopCloser(eofReader{})
		return r.s.mapError("read", r.digest, err)
	}
	r.body = body
	return nil
}

func (r *resumingReader) Close() error { return r.body.Close() }

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }
