package blobio

import (
	"fmt"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/blob"
)

// NotFound reports that no blob with digest is stored. Every driver uses
// it so that the condition is worded and coded identically.
func NotFound(digest string, cause error) error {
	return newError(skilld.ENOTFOUND, blob.ErrNotFound, cause, "blob %s not found", digest)
}

// Integrity reports stored content that does not match its digest; what
// says how (for example "read 10 bytes, stored size is 12").
func Integrity(digest, what string) error {
	return newError(skilld.EINTEGRITY, blob.ErrIntegrity, nil, "blob %s is corrupt: %s", digest, what)
}

// newError builds the *skilld.Error for a sentinel, in the style of pack:
// the message is for people and stays free of the sentinel's text; the
// sentinel and the optional low-level cause both live in Err so that
// errors.Is finds either.
func newError(code string, sentinel, cause error, format string, args ...any) error {
	e := &skilld.Error{Code: code, Message: fmt.Sprintf(format, args...), Err: sentinel}
	if cause != nil {
		e.Err = fmt.Errorf("%w: %w", sentinel, cause)
	}
	return e
}
