package placement_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/skilld/skilld/agent/placement"
)

func names(items []placement.Item) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.Name)
	}
	return out
}

func TestLoadedLRU(t *testing.T) {
	l := &placement.Loaded{Max: 3, Budget: 1000}
	for _, n := range []string{"a", "b", "c"} {
		if un, err := l.Load(n, 100); err != nil || un != nil {
			t.Fatalf("Load(%s) = %v, %v", n, un, err)
		}
	}
	// Re-activating a loaded skill makes it the active one, no copy.
	if un, err := l.Load("a", 100); err != nil || un != nil || !slices.Equal(l.Names(), []string{"b", "c", "a"}) || l.Active() != "a" {
		t.Errorf("re-activation: %v %v %v", un, err, l.Names())
	}
	// One more unloads the least recently used.
	un, err := l.Load("d", 100)
	if err != nil || !slices.Equal(names(un), []string{"b"}) || !slices.Equal(l.Names(), []string{"c", "a", "d"}) {
		t.Errorf("fourth skill: %v %v %v", names(un), err, l.Names())
	}
	// The budget makes room too, oldest first.
	un, err = l.Load("big", 850)
	if err != nil || !slices.Equal(names(un), []string{"c", "a"}) || l.Tokens() != 950 {
		t.Errorf("big skill: %v %v %v %d", names(un), err, l.Names(), l.Tokens())
	}
	// Larger than the whole budget: refused, nothing changes.
	before := l.Names()
	_, err = l.Load("huge", 1001)
	var tl *placement.TooLargeError
	if !errors.As(err, &tl) || tl.Tokens != 1001 || !slices.Equal(l.Names(), before) {
		t.Errorf("huge: %v %v", err, l.Names())
	}
	if !l.Resize("d", 40) || l.Tokens() != 890 || l.Resize("gone", 1) || !l.Has("big") || l.Has("a") {
		t.Errorf("resize and has: %v", l.Items())
	}
}
