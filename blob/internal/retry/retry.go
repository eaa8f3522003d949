// Package retry runs an operation again after transient failures, waiting
// with capped exponential backoff and jitter, until it succeeds, fails for
// good, or the caller's context is done.
package retry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// Policy says how long to wait between attempts and for how long to try.
// The zero Policy uses the defaults noted on each field.
type Policy struct {
	// Initial is the wait after the first failure (default 50 ms); each
	// further failure doubles it.
	Initial time.Duration
	// Max caps the wait (default 2 s), so that a service that comes back is
	// noticed within about that long.
	Max time.Duration
	// Limit bounds the total time spent retrying when ctx has no deadline
	// (0: no bound). Without it a caller that forgot a deadline would retry
	// against a dead service forever.
	Limit time.Duration
}

// GiveUpError is what Do returns when it stopped retrying because ctx was
// done or Limit passed while the operation still failed transiently.
type GiveUpError struct {
	Attempts int
	Elapsed  time.Duration
	// Last is the error of the last attempt (nil if none was made).
	Last error
	// Cause is ctx.Err(), or nil when Limit ended it.
	Cause error
}

func (e *GiveUpError) Error() string {
	why := "context done"
	if e.Cause == nil {
		why = "retry limit reached"
	}
	return fmt.Sprintf("gave up after %d attempts in %v (%s): %v", e.Attempts, e.Elapsed.Round(time.Millisecond), why, e.Last)
}

// Unwrap exposes both the context error and the last failure to errors.Is.
func (e *GiveUpError) Unwrap() []error {
	var errs []error
	for _, err := range []error{e.Cause, e.Last} {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// Do calls op until it returns nil or an error that transient rejects, and
// returns that result. When ctx is done (or p.Limit passes) first, it
// returns a *GiveUpError.
func Do(ctx context.Context, p Policy, transient func(error) bool, op func(ctx context.Context) error) error {
	initial, maxWait := p.Initial, p.Max
	if initial <= 0 {
		initial = 50 * time.Millisecond
	}
	if maxWait <= 0 {
		maxWait = 2 * time.Second
	}
	_, hasDeadline := ctx.Deadline()
	start := time.Now()
	giveUp := func(attempts int, last error) error {
		return &GiveUpError{Attempts: attempts, Elapsed: time.Since(start), Last: last, Cause: ctx.Err()}
	}
	wait := initial
	var prev error
	for attempt := 1; ; attempt++ {
		if ctx.Err() != nil {
			return giveUp(attempt-1, prev)
		}
		err := op(ctx)
		if err == nil {
			return nil
		}
		if cerr := ctx.Err(); cerr != nil {
			// An attempt cut short by the deadline only says "deadline";
			// the failure before it says why we were still trying.
			if errors.Is(err, cerr) && prev != nil {
				err = prev
			}
			return giveUp(attempt, err)
		}
		prev = err
		if !transient(err) {
			return err
		}
		// Jitter between half and all of the wait, so that clients that
		// failed together do not all come back at the same instant.
		sleep := wait/2 + rand.N(wait/2+1)
		if !hasDeadline && p.Limit > 0 && time.Since(start)+sleep > p.Limit {
			return giveUp(attempt, err)
		}
		t := time.NewTimer(sleep)
		select {
		case <-ctx.Done():
			t.Stop()
			return giveUp(attempt, err)
		case <-t.C:
		}
		wait = min(2*wait, maxWait)
	}
}
