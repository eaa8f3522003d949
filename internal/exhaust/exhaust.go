// Package exhaust recognizes errors of a machine out of something every
// request needs — disk space, file descriptors — so that they are told
// apart from bugs: they are EUNAVAILABLE (503 with Retry-After, waited out
// by running tasks like a storage outage), with a message naming what ran
// out, not an internal error.
package exhaust

import (
	"errors"
	"syscall"

	"github.com/skilld/skilld"
)

// What ran out, as Of names it.
const (
	Disk        = "disk space"
	Descriptors = "file descriptors"
)

// Of names what err says ran out: Disk (ENOSPC, EDQUOT) or Descriptors
// (EMFILE, ENFILE); "" when it says neither.
func Of(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return Disk
	case errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE):
		return Descriptors
	}
	return ""
}

// Unavailable returns err as EUNAVAILABLE saying what ran out, where (the
// blob store, the database, the upload's temporary file), when err says
// something ran out; otherwise err as it is.
func Unavailable(err error, where string) error {
	switch Of(err) {
	case Disk:
		return &skilld.Error{Code: skilld.EUNAVAILABLE, Err: err,
			Message: where + ": the disk is full; retry once an operator has freed space"}
	case Descriptors:
		return &skilld.Error{Code: skilld.EUNAVAILABLE, Err: err,
			Message: where + ": the server has too many files open; retry shortly"}
	}
	return err
}
