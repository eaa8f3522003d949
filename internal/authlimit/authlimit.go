// Package authlimit limits failed token checks per client address, for
// every surface that checks tokens (the REST API, MCP, the web UI's
// sign-in and sessions): one limiter per server, so a guesser gains
// nothing by switching surfaces.
package authlimit

import (
	"container/list"
	"context"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/service"
)

// Defaults of the failed-authentication limit.
const (
	// DefaultFailuresPerAddress is how many failed token checks one
	// client address may make per DefaultWindow before its further
	// attempts are refused without a check.
	DefaultFailuresPerAddress = 20
	// DefaultWindow is the window the failures are counted in.
	DefaultWindow = time.Minute
	// maxAuthFailureKeys bounds the addresses (and the recently accepted
	// tokens) remembered: past it the oldest are forgotten, so a flood
	// from many addresses costs bounded memory.
	maxAuthFailureKeys = 10000
	// knownTokenTTL is how long a token that authenticated is let through
	// a limited address: long enough for a client's own traffic to pass
	// while a neighbour behind the same address guesses.
	knownTokenTTL = 24 * time.Hour
)

// Limiter counts failed token checks per client address in fixed
// windows. An address over its limit is refused before its token is
// looked up, so guessing costs the server a map lookup, not a database
// read. Tokens that authenticated recently are remembered by hash and
// still let through: a client behind an address someone else abuses
// keeps working.
type Limiter struct {
	mu     sync.Mutex
	limit  int
	window time.Duration
	max    int
	now    func() time.Time
	addrs  lruMap[authWindow]
	known  lruMap[time.Time] // token hash → when it last authenticated
}

type authWindow struct {
	start    time.Time
	failures int
}

func newLimiter(limit int, window time.Duration, maxKeys int) *Limiter {
	return &Limiter{limit: limit, window: window, max: maxKeys, now: time.Now,
		addrs: newLRUMap[authWindow](), known: newLRUMap[time.Time]()}
}

// refuse returns the 429 for an address over its limit, nil otherwise.
func (l *Limiter) refuse(addr, tokenHash string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	w, ok := l.addrs.get(addr)
	if !ok || now.Sub(w.start) >= l.window || w.failures < l.limit {
		return nil
	}
	if at, ok := l.known.get(tokenHash); ok && now.Sub(at) < knownTokenTTL {
		return nil
	}
	wait := int64((w.start.Add(l.window).Sub(now) + time.Second - 1) / time.Second)
	e := skilld.Errorf(skilld.ERATELIMITED, "too many failed token checks from %s: %d in %s; retry in %d s", addr, w.failures, l.window, wait)
	e.Details = []skilld.Detail{{Field: "retry_after", Message: strconv.FormatInt(max(wait, 1), 10)}}
	return e
}

// failed counts a failed token check of addr.
func (l *Limiter) failed(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	w, ok := l.addrs.get(addr)
	if !ok || now.Sub(w.start) >= l.window {
		w = authWindow{start: now}
	}
	w.failures++
	l.addrs.put(addr, w, l.max)
}

// succeeded remembers a token that authenticated; it is never counted.
func (l *Limiter) succeeded(tokenHash string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.known.put(tokenHash, l.now(), l.max)
}

// lruMap is a map that forgets its least recently written keys past a size.
type lruMap[V any] struct {
	order *list.List // of *lruEntry, oldest first
	byKey map[string]*list.Element
}

type lruEntry[V any] struct {
	key string
	val V
}

func newLRUMap[V any]() lruMap[V] {
	return lruMap[V]{order: list.New(), byKey: map[string]*list.Element{}}
}

func (m *lruMap[V]) get(key string) (V, bool) {
	if el, ok := m.byKey[key]; ok {
		return el.Value.(*lruEntry[V]).val, true
	}
	var zero V
	return zero, false
}

func (m *lruMap[V]) put(key string, val V, limit int) {
	if el, ok := m.byKey[key]; ok {
		el.Value.(*lruEntry[V]).val = val
		m.order.MoveToBack(el)
		return
	}
	m.byKey[key] = m.order.PushBack(&lruEntry[V]{key: key, val: val})
	for m.order.Len() > limit {
		oldest := m.order.Front()
		m.order.Remove(oldest)
		delete(m.byKey, oldest.Value.(*lruEntry[V]).key)
	}
}

func (m *lruMap[V]) len() int { return m.order.Len() }

// New returns a limiter of limit failures per address per window (zero
// or less: the defaults).
func New(limit int, window time.Duration) *Limiter {
	if limit <= 0 {
		limit = DefaultFailuresPerAddress
	}
	if window <= 0 {
		window = DefaultWindow
	}
	return newLimiter(limit, window, maxAuthFailureKeys)
}

// ClientAddress is the address failures are counted by: the connection's
// peer. The server knows no trusted proxy, so X-Forwarded-For, which any
// client can write, is not believed.
func ClientAddress(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// Authenticator resolves a token secret (service.Service.Authenticate).
type Authenticator func(ctx context.Context, secret string) (service.Actor, error)

// Authenticate checks the token r presents through the limit: an address
// over it is refused (429) before the token is looked up, unless the token
// authenticated recently; an unauthorized token counts a failure. A nil
// limiter checks without a limit.
func (l *Limiter) Authenticate(r *http.Request, token string, check Authenticator) (service.Actor, error) {
	if l == nil {
		return check(r.Context(), token)
	}
	addr, hash := ClientAddress(r), service.HashToken(token)
	if err := l.refuse(addr, hash); err != nil {
		return service.Actor{}, err
	}
	a, err := check(r.Context(), token)
	switch {
	case err == nil:
		l.succeeded(hash)
	case skilld.ErrorCode(err) == skilld.EUNAUTHORIZED:
		l.failed(addr)
	}
	return a, err
}
