package adapt

import (
	"context"
	"math/rand/v2"
	"time"
)

// Backoff is the wait before retry number n (from 0), the same schedule the
// SDKs use for HTTP retries: 0.5 s doubling, capped at 8 s, less up to a
// quarter of jitter so that clients that failed together do not retry
// together.
func Backoff(n int) time.Duration {
	d := 8 * time.Second
	if n < 4 {
		d = 500 * time.Millisecond << n
	}
	return d - rand.N(d/4)
}

// Sleep waits d or until ctx ends, whichever is first, and returns the
// context's error in the second case.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
