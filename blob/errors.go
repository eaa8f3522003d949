package blob

import "errors"

// Sentinels for errors.Is. Each error a Store returns that carries one is a
// *skilld.Error with the code given here, so callers can branch either way.
// (The drivers build these errors with blob/internal/blobio, so that every
// driver words and codes them alike.)
var (
	// ErrNotFound (ENOTFOUND): no blob with the digest is stored.
	ErrNotFound = errors.New("blob not found")
	// ErrIntegrity (EINTEGRITY): stored bytes differ from their digest or
	// size: disk corruption, tampering or truncation in transit. It is
	// internal because the caller did nothing wrong and cannot fix it.
	ErrIntegrity = errors.New("blob integrity check failed")
	// ErrInvalidDigest (EINVALID): a digest or digest prefix is malformed.
	ErrInvalidDigest = errors.New("invalid digest")
)
