package sqldb

import (
	"errors"
	"fmt"

	"github.com/skilld/skilld"
)

// notFound maps ErrNoRows to ENOTFOUND with a message naming what was
// missing, and any other error to an internal one.
func notFound(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	what := fmt.Sprintf(format, args...)
	if errors.Is(err, ErrNoRows) {
		return &skilld.Error{Code: skilld.ENOTFOUND, Message: what + " not found", Err: err}
	}
	return internal(err, "reading %s", what)
}

// internal wraps an unexpected database error. Constraint errors that no
// caller expected still get a useful code: a foreign key failure means a
// referenced object is missing, a check failure means an invalid value.
func internal(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	var se *skilld.Error
	if errors.As(err, &se) {
		return err
	}
	what := fmt.Sprintf(format, args...)
	if ce := constraint(err, "foreign_key"); ce != nil {
		return &skilld.Error{Code: skilld.ENOTFOUND, Message: what + ": a referenced object does not exist", Err: err}
	}
	if ce := constraint(err, "check"); ce != nil {
		return &skilld.Error{Code: skilld.EINVALID, Message: what + ": a value is not allowed (" + ce.Constraint + ")", Err: err}
	}
	if ce := constraint(err, "unique"); ce != nil {
		return &skilld.Error{Code: skilld.ECONFLICT, Message: what + ": already exists", Err: err}
	}
	return fmt.Errorf("%s: %w", what, err)
}

// conflict returns ECONFLICT with the message when err is a unique
// violation whose constraint mentions all words, else nil.
func conflict(err error, message string, words ...string) error {
	if ce := constraint(err, "unique", words...); ce != nil {
		return &skilld.Error{Code: skilld.ECONFLICT, Message: message, Err: err}
	}
	return nil
}
