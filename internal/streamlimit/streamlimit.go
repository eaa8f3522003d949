// Package streamlimit bounds what a server holds open for its clients for
// a long time — task event streams, MCP sessions — per token and in all,
// and ends it all when the server stops. Each open stream costs a
// connection (a file descriptor), a goroutine and, while it follows a
// task, a read of the task log every half second; unbounded, one token
// could take the descriptors the database, blobs and sandboxes need.
package streamlimit

import (
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/skilld/skilld"
)

// Sentinel errors, wrapped in the *skilld.Error Acquire returns, so
// callers can use both skilld.ErrorCode and errors.Is.
var (
	// ErrPerToken: the token holds its most (ERATELIMITED, 429).
	ErrPerToken = errors.New("too many open for one token")
	// ErrTotal: the server holds its most (EUNAVAILABLE, 503).
	ErrTotal = errors.New("too many open on this server")
	// ErrClosing: the server is shutting down (EUNAVAILABLE, 503).
	ErrClosing = errors.New("the server is shutting down")
)

// Reasons of a refusal, as Config.OnRefuse sees them (and the metrics
// label them): a fixed set, so a label stays bounded.
const (
	ReasonPerToken = "per_token"
	ReasonTotal    = "total"
	ReasonShutdown = "shutdown"
)

// DefaultRetryAfter is the Retry-After of a refusal when Config gives
// none. A place frees when a client disconnects, not at a known time; a
// few seconds spreads reconnecting clients out without leaving a freed
// place idle long.
const DefaultRetryAfter = 5 * time.Second

// Config is what a Limiter admits.
type Config struct {
	// What names what is limited in messages, plural ("event streams").
	What string
	// PerToken is how many one token may hold at once; Total how many the
	// server holds at once. Zero or less means no limit.
	PerToken, Total int
	// RetryAfter is what a refusal tells the client to wait (default
	// DefaultRetryAfter).
	RetryAfter time.Duration
	// OnRefuse, when set, sees every refusal's reason (ReasonPerToken,
	// ReasonTotal, ReasonShutdown); it must not block.
	OnRefuse func(reason string)
}

// Limiter counts what is open, by token and in all. A nil *Limiter admits
// everything and never closes. Its methods are safe for concurrent use.
type Limiter struct {
	cfg Config

	mu      sync.Mutex
	byToken map[string]int
	open    int
	closed  bool
	done    chan struct{}
}

// New returns a limiter admitting what cfg says.
func New(cfg Config) *Limiter {
	if cfg.RetryAfter <= 0 {
		cfg.RetryAfter = DefaultRetryAfter
	}
	if cfg.What == "" {
		cfg.What = "streams"
	}
	return &Limiter{cfg: cfg, byToken: map[string]int{}, done: make(chan struct{})}
}

// Acquire takes a place for token, or refuses: ERATELIMITED when the
// token holds Config.PerToken, EUNAVAILABLE when the server holds
// Config.Total or is closing, each with a "retry_after" detail in seconds
// (httpapi turns it into Retry-After). release gives the place back; it
// may be called more than once.
func (l *Limiter) Acquire(token string) (release func(), err error) {
	if l == nil {
		return func() {}, nil
	}
	l.mu.Lock()
	var reason string
	switch {
	case l.closed:
		reason = ReasonShutdown
	case l.cfg.PerToken > 0 && l.byToken[token] >= l.cfg.PerToken:
		// Before the total: this client is the one that can do
		// something about it (close one), whatever else is open.
		reason = ReasonPerToken
	case l.cfg.Total > 0 && l.open >= l.cfg.Total:
		reason = ReasonTotal
	default:
		l.open++
		l.byToken[token]++
		l.mu.Unlock()
		var once sync.Once
		return func() { once.Do(func() { l.release(token) }) }, nil
	}
	l.mu.Unlock()
	if l.cfg.OnRefuse != nil {
		l.cfg.OnRefuse(reason)
	}
	return nil, l.refusal(reason)
}

func (l *Limiter) release(token string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if l.byToken[token]--; l.byToken[token] <= 0 {
		delete(l.byToken, token) // a token's entry lives as long as it holds something
	}
}

// refusal is the error of a refused Acquire.
func (l *Limiter) refusal(reason string) error {
	secs := int64((l.cfg.RetryAfter + time.Second - 1) / time.Second)
	var e *skilld.Error
	switch reason {
	case ReasonShutdown:
		e = skilld.Errorf(skilld.EUNAVAILABLE, "the server is shutting down and opens no more %s; retry in %d s, on this server once it is back or on another: %w",
			l.cfg.What, secs, ErrClosing)
	case ReasonTotal:
		e = skilld.Errorf(skilld.EUNAVAILABLE, "this server holds its most open %s (%d); retry in %d s: %w", l.cfg.What, l.cfg.Total, secs, ErrTotal)
	default:
		e = skilld.Errorf(skilld.ERATELIMITED, "this token holds its most open %s (%d); close one, or retry in %d s: %w",
			l.cfg.What, l.cfg.PerToken, secs, ErrPerToken)
	}
	e.Details = []skilld.Detail{{Field: "retry_after", Message: strconv.FormatInt(secs, 10)}}
	return e
}

// Open is how many places are taken.
func (l *Limiter) Open() int {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

// Close refuses every later Acquire and closes Done, so that holders end
// what they hold (the server is stopping). It may be called more than
// once.
func (l *Limiter) Close() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.closed = true
		close(l.done)
	}
}

// Done is closed by Close; nil (never closed) for a nil Limiter.
func (l *Limiter) Done() <-chan struct{} {
	if l == nil {
		return nil
	}
	return l.done
}

// RetryAfter is the wait a refusal names, for holders that tell their
// clients when to come back (an SSE retry field).
func (l *Limiter) RetryAfter() time.Duration {
	if l == nil {
		return DefaultRetryAfter
	}
	return l.cfg.RetryAfter
}
