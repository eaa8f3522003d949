package streamlimit_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/internal/streamlimit"
)

// retryAfter is the "retry_after" detail of a refusal.
func retryAfter(err error) string {
	for _, d := range skilld.ErrorDetails(err) {
		if d.Field == "retry_after" {
			return d.Message
		}
	}
	return ""
}

// TestPerTokenAndTotal: a token gets PerToken places and then 429s; the
// server gets Total and then 503s for every token; a released place is
// free again, and releasing twice frees one.
func TestPerTokenAndTotal(t *testing.T) {
	var reasons []string
	l := streamlimit.New(streamlimit.Config{What: "event streams", PerToken: 2, Total: 3, RetryAfter: 1500 * time.Millisecond,
		OnRefuse: func(r string) { reasons = append(reasons, r) }})
	a1, err := l.Acquire("a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Acquire("a"); err != nil {
		t.Fatal(err)
	}
	_, err = l.Acquire("a")
	if skilld.ErrorCode(err) != skilld.ERATELIMITED || !errors.Is(err, streamlimit.ErrPerToken) || retryAfter(err) != "2" {
		t.Fatalf("a third for one token: %v (%s, retry after %q)", err, skilld.ErrorCode(err), retryAfter(err))
	}
	if _, err := l.Acquire("b"); err != nil {
		t.Fatal(err)
	}
	_, err = l.Acquire("c")
	if skilld.ErrorCode(err) != skilld.EUNAVAILABLE || !errors.Is(err, streamlimit.ErrTotal) || retryAfter(err) != "2" {
		t.Fatalf("a fourth in all: %v", err)
	}
	if l.Open() != 3 {
		t.Errorf("open %d, want 3", l.Open())
	}
	a1()
	a1() // a second release gives nothing back
	if l.Open() != 2 {
		t.Errorf("open %d after one release, want 2", l.Open())
	}
	if _, err := l.Acquire("c"); err != nil {
		t.Errorf("after a release: %v", err)
	}
	if _, err := l.Acquire("c"); !errors.Is(err, streamlimit.ErrTotal) {
		t.Errorf("full again: %v", err)
	}
	if fmt.Sprint(reasons) != "[per_token total total]" {
		t.Errorf("reasons seen: %v", reasons)
	}
}

// TestClose: Close ends Done and refuses every later Acquire with 503;
// places taken before can still be released.
func TestClose(t *testing.T) {
	l := streamlimit.New(streamlimit.Config{PerToken: 1})
	release, err := l.Acquire("a")
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.Done():
		t.Fatal("done before Close")
	default:
	}
	l.Close()
	l.Close()
	select {
	case <-l.Done():
	default:
		t.Fatal("Done not closed by Close")
	}
	_, err = l.Acquire("b")
	if skilld.ErrorCode(err) != skilld.EUNAVAILABLE || !errors.Is(err, streamlimit.ErrClosing) || retryAfter(err) != "5" {
		t.Fatalf("after Close: %v", err)
	}
	release()
	if l.Open() != 0 {
		t.Errorf("open %d", l.Open())
	}
}

// TestNil: a nil limiter admits everything and never closes.
func TestNil(t *testing.T) {
	var l *streamlimit.Limiter
	for range 3 {
		release, err := l.Acquire("a")
		if err != nil {
			t.Fatal(err)
		}
		release()
	}
	l.Close()
	if l.Done() != nil || l.Open() != 0 {
		t.Error("a nil limiter has state")
	}
}

// TestUnlimited: zero limits admit everything.
func TestUnlimited(t *testing.T) {
	l := streamlimit.New(streamlimit.Config{})
	for range 100 {
		if _, err := l.Acquire("a"); err != nil {
			t.Fatal(err)
		}
	}
}

// TestConcurrent: many goroutines racing for places never get more than
// the limits, and everything released leaves nothing held.
func TestConcurrent(t *testing.T) {
	const perToken, total = 5, 12
	l := streamlimit.New(streamlimit.Config{PerToken: perToken, Total: total})
	var mu sync.Mutex
	held, most := map[string]int{}, 0
	var wg sync.WaitGroup
	for i := range 64 {
		token := fmt.Sprint("t", i%4)
		wg.Go(func() {
			for range 200 {
				release, err := l.Acquire(token)
				if err != nil {
					continue
				}
				mu.Lock()
				held[token]++
				if held[token] > perToken {
					t.Errorf("token %s holds %d", token, held[token])
				}
				most = max(most, l.Open())
				held[token]--
				mu.Unlock()
				release()
			}
		})
	}
	wg.Wait()
	if most > total || l.Open() != 0 {
		t.Errorf("most open %d (limit %d), open at the end %d", most, total, l.Open())
	}
}
