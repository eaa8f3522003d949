package outage_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/internal/outage"
)

var down = skilld.Errorf(skilld.EUNAVAILABLE, "down")

func TestWaitOut(t *testing.T) {
	n := 0
	err := outage.WaitOut(t.Context(), time.Minute, "the store", func(context.Context) error {
		if n++; n < 4 {
			return down
		}
		return nil
	})
	if err != nil || n != 4 {
		t.Errorf("recovering store: %v after %d calls", err, n)
	}

	n = 0
	bad := skilld.Errorf(skilld.EINVALID, "bad")
	if err := outage.WaitOut(t.Context(), time.Minute, "the store", func(context.Context) error { n++; return bad }); err != bad || n != 1 {
		t.Errorf("other errors are not retried: %v after %d calls", err, n)
	}

	err = outage.WaitOut(t.Context(), 200*time.Millisecond, "the store", func(ctx context.Context) error {
		if _, ok := ctx.Deadline(); !ok {
			t.Error("an attempt's context has no deadline")
		}
		return down
	})
	if skilld.ErrorCode(err) != skilld.EUNAVAILABLE || !strings.Contains(err.Error(), "the store did not answer within 200ms: down") || !errors.Is(err, down) {
		t.Errorf("giving up: %v", err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := outage.WaitOut(ctx, time.Minute, "the store", func(context.Context) error { return down }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
