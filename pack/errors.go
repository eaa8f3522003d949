package pack

import (
	"errors"
	"fmt"

	"github.com/skilld/skilld"
)

// Sentinels for errors.Is. Every error returned by this package that carries
// one of them is a *skilld.Error whose Code is fixed per sentinel (listed
// below), so callers can branch on the kind of problem without parsing
// messages, and the HTTP/CLI layers can map the code without knowing this
// package.
var (
	// ErrUnsafePath (EINVALID): a path breaks a rule of CheckPath or is too
	// deep or too long for the limits in force.
	ErrUnsafePath = errors.New("unsafe path")
	// ErrPathCollision (EINVALID): two paths are equal, equal after Unicode
	// normalization and case folding, or one is a file and a folder at once.
	ErrPathCollision = errors.New("path collision")
	// ErrTooManyFiles (ETOOLARGE): more files than Limits.MaxFiles.
	ErrTooManyFiles = errors.New("too many files")
	// ErrFileTooLarge (ETOOLARGE): one file over Limits.MaxFileSize.
	ErrFileTooLarge = errors.New("file too large")
	// ErrTooLarge (ETOOLARGE): all files together over Limits.MaxTotalSize.
	ErrTooLarge = errors.New("package too large")
	// ErrCompressionRatio (ETOOLARGE): an entry or a compressed stream expands
	// more than Limits.MaxRatio times; the shape of a decompression bomb.
	ErrCompressionRatio = errors.New("compression ratio too high")
	// ErrUnsupportedEntry (EINVALID): a link, device, FIFO, socket, unknown
	// entry type, or encrypted entry.
	ErrUnsupportedEntry = errors.New("unsupported entry")
	// ErrBadArchive (EINVALID): the archive is corrupt, truncated, of an
	// unsupported format, or its size headers lie.
	ErrBadArchive = errors.New("bad archive")
)

// newError builds the *skilld.Error for a sentinel. The message stays free of
// the sentinel's own text because it is what end users read; the sentinel and
// the optional low-level cause both live in Err so errors.Is finds either.
func newError(code string, sentinel, cause error, format string, args ...any) error {
	e := &skilld.Error{Code: code, Message: fmt.Sprintf(format, args...), Err: sentinel}
	if cause != nil {
		e.Err = fmt.Errorf("%w: %w", sentinel, cause)
	}
	return e
}

// pathErr reports a path that breaks a rule; the path is also recorded as a
// Detail field so API clients can point at it without parsing the message.
func pathErr(sentinel error, path, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	return &skilld.Error{
		Code:    skilld.EINVALID,
		Message: fmt.Sprintf("path %q %s", path, msg),
		Details: []skilld.Detail{{Field: path, Message: msg}},
		Err:     sentinel,
	}
}

func errTooManyFiles(max int) error {
	return newError(skilld.ETOOLARGE, ErrTooManyFiles, nil, "package has more than %d files", max)
}

func errFileTooLarge(path string, size, max int64) error {
	return newError(skilld.ETOOLARGE, ErrFileTooLarge, nil,
		"file %q is %d bytes, over the %d-byte limit per file", path, size, max)
}

func errTooLarge(max int64) error {
	return newError(skilld.ETOOLARGE, ErrTooLarge, nil,
		"package is over the %d-byte limit for all files together", max)
}

// errUnsupported names the entry by what it is in (an "archive entry", a
// "directory entry") so the user knows where to look.
func errUnsupported(where, path, why string) error {
	return newError(skilld.EINVALID, ErrUnsupportedEntry, nil, "%s %q %s", where, path, why)
}

func errBadArchive(cause error, format string, args ...any) error {
	return newError(skilld.EINVALID, ErrBadArchive, cause, format, args...)
}
