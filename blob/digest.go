package blob

import (
	"fmt"
	"strings"

	"github.com/skilld/skilld"
)

// Algorithm is the digest algorithm of every blob, and DigestPrefix the text
// that starts every digest. Only one algorithm exists today; naming it in the
// digest (as OCI does) leaves room for another without ambiguity.
const (
	Algorithm    = "sha256"
	DigestPrefix = Algorithm + ":"
	// HexLen is the number of hex digits after DigestPrefix.
	HexLen = 64
)

// ParseDigest validates d as "sha256:" followed by exactly 64 lowercase hex
// digits and returns the hex part. Anything else (another algorithm,
// uppercase, wrong length, path characters) is EINVALID wrapping
// ErrInvalidDigest. Drivers build file paths and object keys only from the
// returned hex, which is why no digest can reach outside a store.
func ParseDigest(d string) (hexPart string, err error) {
	hexPart, ok := strings.CutPrefix(d, DigestPrefix)
	switch {
	case !ok:
		return "", invalidDigest(d, "must start with %q", DigestPrefix)
	case len(hexPart) != HexLen:
		return "", invalidDigest(d, "must have %d hex digits after %q, has %d characters",
			HexLen, DigestPrefix, len(hexPart))
	}
	if i := firstNonHex(hexPart); i >= 0 {
		return "", invalidDigest(d, "character %q at offset %d is not a lowercase hex digit",
			hexPart[i], len(DigestPrefix)+i)
	}
	return hexPart, nil
}

// FormatDigest is the inverse of ParseDigest for a 64-digit lowercase hex.
func FormatDigest(hexPart string) string { return DigestPrefix + hexPart }

// ParsePrefix validates a List prefix: "" or any leading part of a valid
// digest ("s", "sha256:", "sha256:ab"). It returns the hex digits the prefix
// fixes (possibly none), which drivers map onto their layout.
func ParsePrefix(prefix string) (hexPrefix string, err error) {
	if len(prefix) <= len(DigestPrefix) {
		if !strings.HasPrefix(DigestPrefix, prefix) {
			return "", invalidPrefix(prefix, "must be the start of a digest like %q", DigestPrefix+"ab")
		}
		return "", nil
	}
	hexPrefix, ok := strings.CutPrefix(prefix, DigestPrefix)
	switch {
	case !ok:
		return "", invalidPrefix(prefix, "must start with %q", DigestPrefix)
	case len(hexPrefix) > HexLen:
		return "", invalidPrefix(prefix, "is longer than a digest")
	}
	if i := firstNonHex(hexPrefix); i >= 0 {
		return "", invalidPrefix(prefix, "character %q at offset %d is not a lowercase hex digit",
			hexPrefix[i], len(DigestPrefix)+i)
	}
	return hexPrefix, nil
}

// IsHex reports whether s consists only of lowercase hex digits; drivers use
// it to ignore foreign files and keys while listing.
func IsHex(s string) bool { return firstNonHex(s) < 0 }

func firstNonHex(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return i
		}
	}
	return -1
}

// invalidDigest quotes the digest with %q so that control characters or
// path tricks in it show up plainly in logs and messages.
func invalidDigest(d, format string, args ...any) error {
	return invalid("digest", "digest", d, format, args...)
}

func invalidPrefix(p, format string, args ...any) error {
	return invalid("prefix", "digest prefix", p, format, args...)
}

// invalid is the EINVALID error for a malformed value of field, called what
// in the message.
func invalid(field, what, value, format string, args ...any) error {
	return &skilld.Error{
		Code:    skilld.EINVALID,
		Message: fmt.Sprintf("%s %q "+format, append([]any{what, value}, args...)...),
		Details: []skilld.Detail{{Field: field, Message: fmt.Sprintf(format, args...)}},
		Err:     ErrInvalidDigest,
	}
}
