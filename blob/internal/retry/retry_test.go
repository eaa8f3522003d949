package retry

import (
	"context"
	"errors"
	"testing"
	"time"
)

var (
	errTransient = errors.New("transient")
	errFatal     = errors.New("fatal")
)

func isTransient(err error) bool { return errors.Is(err, errTransient) }

func fast() Policy { return Policy{Initial: time.Millisecond, Max: 4 * time.Millisecond} }

func TestRetriesTransientUntilSuccess(t *testing.T) {
	calls := 0
	err := Do(context.Background(), fast(), isTransient, func(context.Context) error {
		calls++
		if calls < 4 {
			return errTransient
		}
		return nil
	})
	if err != nil || calls != 4 {
		t.Fatalf("err=%v calls=%d, want nil after 4 calls", err, calls)
	}
}

func TestStopsAtOnceOnPermanentError(t *testing.T) {
	calls := 0
	err := Do(context.Background(), fast(), isTransient, func(context.Context) error {
		calls++
		return errFatal
	})
	if !errors.Is(err, errFatal) || calls != 1 {
		t.Fatalf("err=%v calls=%d, want errFatal after 1 call", err, calls)
	}
	var g *GiveUpError
	if errors.As(err, &g) {
		t.Fatalf("a permanent error must come back as itself, got %T", err)
	}
}

func TestGivesUpWhenContextEnds(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	err := Do(ctx, fast(), isTransient, func(context.Context) error { return errTransient })
	var g *GiveUpError
	if !errors.As(err, &g) || g.Attempts < 2 {
		t.Fatalf("err=%v, want GiveUpError after several attempts", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, errTransient) {
		t.Fatalf("err=%v should wrap both the deadline and the last failure", err)
	}
}

func TestLimitBoundsContextWithoutDeadline(t *testing.T) {
	p := fast()
	p.Limit = 20 * time.Millisecond
	err := Do(context.Background(), p, isTransient, func(context.Context) error { return errTransient })
	var g *GiveUpError
	if !errors.As(err, &g) || g.Cause != nil {
		t.Fatalf("err=%v, want GiveUpError without a context cause", err)
	}
}

func TestAlreadyCancelledMakesNoAttempt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := Do(ctx, fast(), isTransient, func(context.Context) error {
		t.Fatal("op called with a cancelled context")
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err=%v, want context.Canceled", err)
	}
}

// An attempt cut short by the deadline reports the deadline; the error
// before it is the informative one and is what GiveUpError keeps.
func TestKeepsInformativeLastError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	err := Do(ctx, fast(), isTransient, func(ctx context.Context) error {
		if calls++; calls == 2 {
			cancel()
			return ctx.Err()
		}
		return errTransient
	})
	var g *GiveUpError
	if !errors.As(err, &g) || !errors.Is(g.Last, errTransient) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err=%v, want GiveUpError with Last=errTransient and Cause=Canceled", err)
	}
}
