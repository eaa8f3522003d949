package mcpserver

import (
	"sync"

	"github.com/skilld/skilld"
)

// memo is a bounded map shared by the sessions of one handler. When full
// it starts over: dropping everything is simpler than tracking use, and
// costs only recomputing what was dropped. Everything kept in one is
// immutable once stored.
type memo[K comparable, V any] struct {
	mu  sync.Mutex
	max int
	m   map[K]V
}

func newMemo[K comparable, V any](max int) *memo[K, V] {
	return &memo[K, V]{max: max, m: map[K]V{}}
}

func (c *memo[K, V]) get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

// put stores v under k unless an entry is already there, and returns the
// entry that stays: callers racing to fill one key all get the same.
func (c *memo[K, V]) put(k K, v V) V {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[k]; ok {
		return old
	}
	if len(c.m) >= c.max {
		clear(c.m)
	}
	c.m[k] = v
	return v
}

// set stores v under k, replacing what was there.
func (c *memo[K, V]) set(k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[k]; !ok && len(c.m) >= c.max {
		clear(c.m)
	}
	c.m[k] = v
}

// caches are what a handler's sessions share. Each is keyed by what its
// values follow from (content digests, or a workspace with the revision
// of what it lists), so no session is ever shown another workspace's
// view, or one older than its revision.
type caches struct {
	// skillMDs maps served SKILL.md files to their path, digest and
	// size (see published.go).
	skillMDs *memo[skillMDKey, skilld.PackageFile]
	// invocable says whether a package's skill may be activated by the
	// model, by package digest.
	invocable *memo[string, bool]
	// views holds the latest view read of each workspace, by workspace
	// ID: only the current revision's is ever asked for.
	views *memo[string, *view]
	// activations holds rendered activate_skill answers.
	activations *memo[activationKey, string]
}

// Bounds of the caches. A SKILL.md entry is a few hundred bytes, an
// invocability one a digest; a view holds a workspace's skill list and its
// enum (a few MiB at ten thousand skills), one per workspace; an activation is at most one
// entry's share of a window, tens of KiB.
const (
	maxSkillMDs    = 8192
	maxInvocable   = 65536
	maxViews       = 32
	maxActivations = 512
)

func newCaches() *caches {
	return &caches{
		skillMDs:    newMemo[skillMDKey, skilld.PackageFile](maxSkillMDs),
		invocable:   newMemo[string, bool](maxInvocable),
		views:       newMemo[string, *view](maxViews),
		activations: newMemo[activationKey, string](maxActivations),
	}
}
