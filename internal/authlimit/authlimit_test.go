package authlimit

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestAuthLimiterBounded: a flood of failures from many addresses keeps
// at most the cap of addresses, forgetting the oldest; a limited address
// is refused until its window ends, and a token that authenticated passes.
func TestAuthLimiterBounded(t *testing.T) {
	now := time.Unix(1000, 0)
	l := newLimiter(3, time.Minute, 100)
	l.now = func() time.Time { return now }
	for i := range 10000 {
		l.failed("10.0." + strconv.Itoa(i/256) + "." + strconv.Itoa(i%256))
	}
	if n := l.addrs.len(); n != 100 || len(l.addrs.byKey) != 100 {
		t.Errorf("%d addresses kept, want 100", n)
	}
	if _, ok := l.addrs.get("10.0.0.0"); ok {
		t.Error("the oldest address is still kept")
	}
	for range 3 {
		l.failed("a")
	}
	if err := l.refuse("a", "h1"); err == nil || !strings.Contains(err.Error(), "retry in 60 s") {
		t.Errorf("limited address: %v", err)
	}
	l.succeeded("h2")
	if err := l.refuse("a", "h2"); err != nil {
		t.Errorf("a known token: %v", err)
	}
	for i := range 1000 {
		l.succeeded("t" + strconv.Itoa(i))
	}
	if n := l.known.len(); n != 100 {
		t.Errorf("%d tokens kept, want 100", n)
	}
	now = now.Add(time.Minute)
	if err := l.refuse("a", "h1"); err != nil {
		t.Errorf("after the window: %v", err)
	}
}
