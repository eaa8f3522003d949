// Package skilld holds the domain words shared by every part of the server and
// runtime: the error type with its codes, and the entities the storage
// drivers keep and the service, the REST API, the CLI and the agent toolset
// pass around (workspaces, members, roles and tokens; skills, their versions
// and packages; catalog items and installs; agents with their context and
// sandbox settings; policies; tasks, their log and events). It holds data
// and the small rules that belong to it, no behaviour that needs I/O.
package skilld

import (
	"errors"
	"fmt"
)

// Error codes. Every error that crosses a package boundary carries one, so the
// HTTP layer, the CLI and the agent toolset can each map it to their own
// vocabulary (status code, exit code, tool error) in one place.
const (
	ENOTFOUND     = "not_found"
	EINVALID      = "invalid"
	ECONFLICT     = "conflict"
	EFORBIDDEN    = "forbidden"
	EUNAUTHORIZED = "unauthorized"
	ETOOLARGE     = "too_large"
	EUNAVAILABLE  = "unavailable"
	ERATELIMITED  = "rate_limited"
	// EQUOTA: the workspace keeps as much as its storage quota allows;
	// waiting does not help, deleting what it keeps (or a larger quota)
	// does.
	EQUOTA = "quota_exceeded"
	// EINTEGRITY: stored bytes no longer match their digest. Unlike
	// EINTERNAL its message is shown: it names the damaged file, and the
	// fix (upload it again, skilld fsck) is the operator's to make.
	EINTEGRITY = "integrity"
	EINTERNAL  = "internal"
)

// Detail is one named problem inside an Error: a field (a frontmatter key, a
// file path, a request parameter) and what is wrong with it.
type Detail struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Error is the typed error of skilld. Message is safe to show to the caller;
// Err, when set, is the underlying cause (kept for errors.Is/As and logs, never
// shown to remote callers for EINTERNAL).
type Error struct {
	Code    string
	Message string
	Details []Detail
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil && e.Message == "" {
		return e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the given code and a formatted message. A %w
// verb in format also records the wrapped error as the cause.
func Errorf(code, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	return &Error{Code: code, Message: err.Error(), Err: errors.Unwrap(err)}
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL for
// any other non-nil error, and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the caller-safe message of err: the message of the first
// *Error in its chain, or a generic text for untyped (internal) errors.
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}

// ErrorDetails returns the details of the first *Error in err's chain.
func ErrorDetails(err error) []Detail {
	var e *Error
	if errors.As(err, &e) {
		return e.Details
	}
	return nil
}

// Backends an error can come from (ErrorBackend): the storage a server
// depends on, so that metrics and logs can tell a database outage from a
// blob store one.
const (
	BackendDatabase = "database"
	BackendBlob     = "blob"
)

// BackendError marks Err as raised by a storage backend: the store and
// blob drivers wrap their errors in one at the point they leave the
// backend's client library. It changes nothing else: code, message and
// errors.Is/As see through it.
type BackendError struct {
	Backend string
	Err     error
}

func (e *BackendError) Error() string { return e.Err.Error() }
func (e *BackendError) Unwrap() error { return e.Err }

// FromBackend marks err as coming from backend; nil stays nil and an
// error already marked keeps its mark.
func FromBackend(backend string, err error) error {
	if err == nil {
		return nil
	}
	var be *BackendError
	if errors.As(err, &be) {
		return err
	}
	return &BackendError{Backend: backend, Err: err}
}

// ErrorBackend returns the backend that raised err (BackendDatabase,
// BackendBlob), or "" when no backend marked it.
func ErrorBackend(err error) string {
	var be *BackendError
	if errors.As(err, &be) {
		return be.Backend
	}
	return ""
}
