// Package blob defines the content-addressed blob store that holds the files
// of skill packages: a blob is named by the SHA-256 of its bytes, so storing
// the same bytes twice is a no-op, a name can never point at other content,
// and every read can prove it returns what was stored.
//
// The drivers live in subpackages (fsblob for a local file system, s3blob for
// S3-compatible object storage); bloburl opens either from a URL; blobtest is
// the conformance suite both pass.
//
// Every error a Store returns is a *skilld.Error. Callers branch on the code
// (skilld.ErrorCode) or on the sentinels here (errors.Is):
//
//	ErrNotFound      ENOTFOUND    no blob with that digest
//	ErrIntegrity     EINTEGRITY   the stored bytes do not match their digest
//	ErrInvalidDigest EINVALID     a digest (or digest prefix) is malformed
//
// and a driver reports storage it cannot reach (within the caller's context)
// as EUNAVAILABLE.
package blob

import (
	"context"
	"io"
	"iter"
	"time"
)

// Info describes a stored blob.
type Info struct {
	// Digest is "sha256:" followed by 64 lowercase hex digits.
	Digest string
	// Size is the length of the content in bytes.
	Size int64
	// ModTime is when the blob was first stored, as the storage reports it.
	ModTime time.Time
}

// Store is a content-addressed blob store. Implementations are safe for
// concurrent use by multiple goroutines. Every method that takes a digest
// validates it with ParseDigest first, so a digest can never be used to reach
// outside the store (no path or key tricks).
type Store interface {
	// Put streams r into the store, hashing while writing, and returns the
	// digest and size of what it read. Memory use does not depend on the
	// size of the content. Put is atomic (a partial blob is never visible
	// under any digest, even if the process dies mid-write) and idempotent
	// (putting content that is already stored succeeds and changes nothing),
	// and it heals: when the stored copy is damaged, the new one replaces
	// it.
	// When ctx is done Put stops at the next read from r and stores nothing;
	// a reader that blocks forever cannot be interrupted by ctx.
	Put(ctx context.Context, r io.Reader) (Info, error)

	// Open returns the content of a blob. The reader verifies the size and
	// SHA-256 of what it returns and fails with an error wrapping
	// ErrIntegrity, at the latest at EOF, when they do not match the
	// digest; callers must read to EOF (and check that error) before
	// trusting the bytes. ctx governs the reads as well as the open.
	// A missing blob is ENOTFOUND wrapping ErrNotFound.
	Open(ctx context.Context, digest string) (io.ReadCloser, error)

	// Stat describes a blob; a missing blob is ENOTFOUND wrapping ErrNotFound.
	Stat(ctx context.Context, digest string) (Info, error)

	// Delete removes a blob. Deleting a missing blob is not an error.
	Delete(ctx context.Context, digest string) error

	// List yields the blobs whose digest starts with prefix (for example
	// "sha256:ab"; "" lists all) in ascending digest order. A malformed
	// prefix yields one EINVALID error. After an error the sequence ends.
	List(ctx context.Context, prefix string) iter.Seq2[Info, error]

	// Close releases the store's resources (idle connections). The store
	// must not be used afterwards.
	Close() error
}
