// Package outage waits out storage that is briefly unreachable: a database
// restarting or failing over, an S3 endpoint blinking. Work that must not
// be lost to a short outage (a task's log, the end of a task, a skill's
// package) retries while the error is EUNAVAILABLE, with capped exponential
// backoff, up to a limit.
package outage

import (
	"context"
	"errors"
	"time"

	"github.com/skilld/skilld"
)

// First and Cap bound the pause between attempts.
const (
	First = 50 * time.Millisecond
	Cap   = 2 * time.Second
)

// WaitOut calls fn until it returns an error other than EUNAVAILABLE (or
// none), ctx ends, or limit has passed since the first call. Each call gets
// a context bounded by the limit, so an attempt that hangs on a dead
// connection cannot outlast it. Past the limit the last error is returned
// as EUNAVAILABLE, naming what was waited for.
func WaitOut(ctx context.Context, limit time.Duration, what string, fn func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	wait := First
	for {
		err := fn(ctx)
		if err == nil || skilld.ErrorCode(err) != skilld.EUNAVAILABLE {
			return err
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return &skilld.Error{Code: skilld.EUNAVAILABLE, Err: err,
					Message: what + " did not answer within " + limit.String() + ": " + skilld.ErrorMessage(err)}
			}
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(wait*2, Cap)
	}
}
