package blobio

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/blob"
)

// Verifier is the reader every Store.Open returns: it passes the content
// through while hashing it and counting it, and fails with blob.ErrIntegrity
// as soon as it sees more bytes than the storage announced, or at EOF when
// the length or the hash differ. The check runs on every read, not once at
// write time, because the threat is bit rot, tampering and truncation after
// the blob was stored.
type Verifier struct {
	ctx    context.Context
	rc     io.ReadCloser
	digest string
	want   string // hex SHA-256
	size   int64  // announced size
	n      int64
	h      hash.Hash
	err    error // sticky: once failed, every later Read fails the same way
}

// NewVerifier wraps rc, whose content should be size bytes hashing to
// wantHex (the hex part of digest). Reads fail once ctx is done, so a reader
// outliving its request stops promptly even when rc itself ignores ctx (a
// local file does).
func NewVerifier(ctx context.Context, rc io.ReadCloser, digest, wantHex string, size int64) *Verifier {
	return &Verifier{ctx: ctx, rc: rc, digest: digest, want: wantHex, size: size, h: sha256.New()}
}

func (v *Verifier) Read(p []byte) (int, error) {
	if v.err != nil {
		return 0, v.err
	}
	if err := v.ctx.Err(); err != nil {
		v.err = ContextError("reading blob "+v.digest, err)
		return 0, v.err
	}
	n, err := v.rc.Read(p)
	v.h.Write(p[:n])
	v.n += int64(n)
	switch {
	case v.n > v.size:
		v.err = Integrity(v.digest, fmt.Sprintf("more than the stored size of %d bytes", v.size))
		return n, v.err
	case err == io.EOF:
		if v.n != v.size {
			v.err = Integrity(v.digest, fmt.Sprintf("read %d bytes, stored size is %d", v.n, v.size))
			return n, v.err
		}
		if got := hex.EncodeToString(v.h.Sum(nil)); got != v.want {
			v.err = Integrity(v.digest, "content hashes to "+blob.FormatDigest(got))
			return n, v.err
		}
		return n, io.EOF
	case err != nil:
		var se *skilld.Error
		if !errors.As(err, &se) {
			err = &skilld.Error{Code: skilld.EINTERNAL, Message: "reading blob " + v.digest + ": " + err.Error(), Err: err}
		}
		v.err = err
		return n, err
	}
	return n, nil
}

// Close closes the underlying reader.
func (v *Verifier) Close() error { return v.rc.Close() }
