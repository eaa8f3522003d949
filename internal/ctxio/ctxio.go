// Package ctxio makes long reads stop when their context is done.
package ctxio

import (
	"context"
	"io"
)

// Reader is r that fails its reads with ctx's error once ctx is done, so
// that a long copy (a big gzip stream, a slow disk) stops within one
// buffer of a cancellation, not only between files.
func Reader(ctx context.Context, r io.Reader) io.Reader { return reader{ctx, r} }

type reader struct {
	ctx context.Context
	r   io.Reader
}

func (c reader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
