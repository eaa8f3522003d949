// Package blobio holds the streaming pieces every blob driver shares:
// copying content while hashing it, and reading it back while verifying it.
package blobio

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"

	"github.com/skilld/skilld"
)

// copyBufSize is the chunk size of Copy. Larger than io.Copy's 32 KiB to cut
// the number of write system calls (expensive in the VMs we run on) while
// keeping memory per Put small and independent of the content size.
const copyBufSize = 256 << 10

// Copy streams src into dst, hashing as it goes, and returns the hex SHA-256
// and length of what it copied. It checks ctx before every read, so a
// cancelled Put stops after at most one more chunk.
//
// Errors from src and ctx come back as *skilld.Error (src keeps its own code
// if it has one, so a size limit enforced by the caller's reader stays
// ETOOLARGE; ctx is EUNAVAILABLE). Errors writing dst come back untyped so
// the driver can wrap them with what it was writing to.
func Copy(ctx context.Context, dst io.Writer, src io.Reader) (hexSum string, n int64, err error) {
	h := sha256.New()
	buf := make([]byte, copyBufSize)
	for {
		if err := ctx.Err(); err != nil {
			return "", n, ContextError("put", err)
		}
		nr, rerr := src.Read(buf)
		if nr > 0 {
			h.Write(buf[:nr]) // a hash.Hash never returns an error
			nw, werr := dst.Write(buf[:nr])
			n += int64(nw)
			if werr == nil && nw != nr {
				werr = io.ErrShortWrite
			}
			if werr != nil {
				return "", n, werr
			}
		}
		if rerr == io.EOF {
			return hex.EncodeToString(h.Sum(nil)), n, nil
		}
		if rerr != nil {
			return "", n, &skilld.Error{
				Code:    skilld.ErrorCode(rerr),
				Message: "put: reading the content to store: " + skilld.ErrorMessage(rerr),
				Err:     rerr,
			}
		}
	}
}

// ContextError types a context error: the caller gave up or ran out of time,
// which for the caller's caller reads as the storage being unavailable.
// errors.Is(err, context.Canceled / DeadlineExceeded) keeps working.
func ContextError(op string, err error) error {
	msg := op + " cancelled"
	if errors.Is(err, context.DeadlineExceeded) {
		msg = op + " ran out of time"
	}
	return &skilld.Error{Code: skilld.EUNAVAILABLE, Message: msg, Err: err}
}
