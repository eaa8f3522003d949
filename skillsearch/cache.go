package skillsearch

import (
	"hash/maphash"
	"sync"
)

// maxCached bounds the indexes a Cache keeps: each agent with many skills
// has one, and a worker runs the tasks of a few agents at a time.
const maxCached = 8

// Cache keeps indexes by the skills they were built from, so that the
// tasks of an agent with thousands of skills share one index instead of
// each building its own. The zero value is ready; it is safe for
// concurrent use. When full it drops the least recently used index.
type Cache struct {
	mu      sync.Mutex
	seed    maphash.Seed
	entries map[key]*cacheEntry
	clock   uint64
	// builds counts the indexes built, for tests.
	builds int
}

type cacheEntry struct {
	ix   *Index
	used uint64
	// ready is closed once ix is built: concurrent first searches of the
	// same skills wait for one build.
	ready chan struct{}
}

// Index returns the index of skills, building it when no index of the
// same skills (names, descriptions and headings, in order) is cached.
// A nil Cache builds every time.
func (c *Cache) Index(skills []Skill) *Index {
	if c == nil {
		return New(skills)
	}
	c.mu.Lock()
	if c.entries == nil {
		c.entries, c.seed = map[key]*cacheEntry{}, maphash.MakeSeed()
	}
	k := keyOf(c.seed, skills)
	c.clock++
	if e, ok := c.entries[k]; ok {
		e.used = c.clock
		c.mu.Unlock()
		<-e.ready
		return e.ix
	}
	if len(c.entries) >= maxCached {
		c.evict()
	}
	e := &cacheEntry{used: c.clock, ready: make(chan struct{})}
	c.entries[k] = e
	c.builds++
	c.mu.Unlock()
	e.ix = New(skills)
	close(e.ready)
	return e.ix
}

func (c *Cache) evict() {
	var oldest key
	at := uint64(0)
	for k, e := range c.entries {
		if at == 0 || e.used < at {
			oldest, at = k, e.used
		}
	}
	delete(c.entries, oldest)
}

// Builds reports how many indexes the cache has built.
func (c *Cache) Builds() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.builds
}

// key identifies a list of skills by its content: two 64-bit hashes
// (seeded per cache, so no one can aim for a collision) over every field,
// each length-prefixed so that no two lists read alike, and the count.
type key struct {
	a, b uint64
	n    int
}

func keyOf(seed maphash.Seed, skills []Skill) key {
	var h1, h2 maphash.Hash
	h1.SetSeed(seed)
	h2.SetSeed(seed)
	h2.WriteByte(1)
	put := func(s string) {
		for _, h := range []*maphash.Hash{&h1, &h2} {
			maphash.WriteComparable(h, len(s))
			h.WriteString(s)
		}
	}
	for _, s := range skills {
		put(s.Name)
		put(s.Description)
		for _, h := range []*maphash.Hash{&h1, &h2} {
			maphash.WriteComparable(h, len(s.Headings))
		}
		for _, hd := range s.Headings {
			put(hd)
		}
	}
	return key{h1.Sum64(), h2.Sum64(), len(skills)}
}
