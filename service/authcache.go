package service

import (
	"sync"
	"time"

	"github.com/skilld/skilld"
)

// AuthCacheTTL is how long a server trusts what it read of a token or a
// workspace before reading it again. Every request authenticates, and the
// two lookups were a sixth of a list request's CPU; two seconds saves
// nearly all of them. It is also the bound on revocation: a token revoked
// through another server stops working here within AuthCacheTTL (through
// this server, at once), and an expired token is refused at its expiry.
const AuthCacheTTL = 2 * time.Second

// maxAuthCache bounds each cache; when full it starts over, which costs
// one lookup per caller and keeps a flood of distinct tokens from growing
// memory.
const maxAuthCache = 10000

// ttlCache remembers values for AuthCacheTTL.
type ttlCache[V any] struct {
	mu sync.Mutex
	m  map[string]cached[V]
}

type cached[V any] struct {
	v  V
	at time.Time
}

func (c *ttlCache[V]) get(key string, now time.Time) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	if !ok || now.Sub(e.at) >= AuthCacheTTL || now.Before(e.at) {
		var zero V
		return zero, false
	}
	return e.v, true
}

func (c *ttlCache[V]) put(key string, v V, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxAuthCache {
		c.m = make(map[string]cached[V])
	}
	c.m[key] = cached[V]{v: v, at: now}
}

// update replaces a cached value without making it younger.
func (c *ttlCache[V]) update(key string, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[key]; ok {
		c.m[key] = cached[V]{v: v, at: e.at}
	}
}

// forget drops the entry of key.
func (c *ttlCache[V]) forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, key)
}

// drop forgets the entries whose value matches.
func (c *ttlCache[V]) drop(match func(V) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.m {
		if match(e.v) {
			delete(c.m, k)
		}
	}
}

// authCache holds tokens by the hash of their secret and workspaces by ID
// and by name. Values are copies: callers may not change what they get.
type authCache struct {
	tokens     ttlCache[skilld.Token]
	workspaces ttlCache[skilld.Workspace]
}
