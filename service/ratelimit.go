package service

import (
	"cmp"
	"math"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/skilld/skilld"
)

// Rates bound expensive operations per workspace, per minute, so that one
// tenant's script cannot take the server (or its GitHub quota) from the
// others. Zero fields take the defaults; a negative one turns its limit
// off.
type Rates struct {
	// Imports counts skill imports (GitHub, server folders): each
	// downloads, unpacks and stores a package.
	Imports int
	// Searches counts skill and catalog lists with a search text: each
	// is a scan the page caches cannot answer.
	Searches int
}

// Defaults of Rates.
const (
	DefaultImportsPerMinute  = 30
	DefaultSearchesPerMinute = 600
)

// rateLimits holds a token bucket per workspace and kind of operation:
// each allows its per-minute count at once, then refills over the minute.
// A bucket is small and there is one per workspace that used the
// operation, so memory is bounded by the workspaces.
type rateLimits struct {
	mu      sync.Mutex
	buckets map[rateKey]*rate.Limiter
}

type rateKey struct{ workspace, kind string }

// allow takes one operation of kind ("imports", "searches") for the
// actor's workspace from a bucket of perMinute, or says when to retry.
func (l *rateLimits) allow(a Actor, kind, flag string, perMinute int, now time.Time) error {
	if perMinute < 0 {
		return nil
	}
	l.mu.Lock()
	if l.buckets == nil {
		l.buckets = map[rateKey]*rate.Limiter{}
	}
	k := rateKey{a.WorkspaceID, kind}
	b := l.buckets[k]
	if b == nil {
		b = rate.NewLimiter(rate.Limit(float64(perMinute)/60), perMinute)
		l.buckets[k] = b
	}
	l.mu.Unlock()
	r := b.ReserveN(now, 1)
	wait := r.DelayFrom(now)
	if wait == 0 {
		return nil
	}
	r.CancelAt(now)
	secs := strconv.Itoa(int(math.Ceil(wait.Seconds())))
	return &skilld.Error{Code: skilld.ERATELIMITED,
		Message: "this workspace made more than " + strconv.Itoa(perMinute) + " " + kind + " in a minute; retry in " + secs + "s (the operator sets the limit with " + flag + ")",
		Details: []skilld.Detail{{Field: "retry_after", Message: secs}}}
}

// limitImports and limitSearches apply Config.Rates.
func (s *Service) limitImports(a Actor) error {
	return s.rates.allow(a, "imports", "--import-rate", cmp.Or(s.cfg.Rates.Imports, DefaultImportsPerMinute), s.cfg.Now())
}

func (s *Service) limitSearches(a Actor, search string) error {
	if search == "" {
		return nil
	}
	return s.rates.allow(a, "searches", "--search-rate", cmp.Or(s.cfg.Rates.Searches, DefaultSearchesPerMinute), s.cfg.Now())
}
