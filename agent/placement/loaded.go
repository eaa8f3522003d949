// Package placement keeps the skills loaded into a run's context in
// `context` placement: at most Max at once, the least
// recently used unloaded to make room for a new one, all of them within a
// token budget. It is pure bookkeeping, testable without a run.
package placement

import (
	"fmt"
	"slices"
)

// Item is one loaded skill and the tokens it renders into the context.
type Item struct {
	Name   string
	Tokens int
}

// Loaded is the set of loaded skills, least recently used first; the last
// is the active skill.
type Loaded struct {
	// Max is how many skills may be loaded at once.
	Max int
	// Budget is how many tokens all loaded skills may render together.
	Budget int

	items []Item
}

// TooLargeError says a skill cannot be loaded even with every other skill
// unloaded.
type TooLargeError struct {
	Name           string
	Tokens, Budget int
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("skill %q needs %d tokens, more than the %d all loaded skills may take together", e.Name, e.Tokens, e.Budget)
}

// Load makes name the active skill. A loaded skill is only moved to the
// end (nothing is unloaded, no second copy). A new one unloads the least
// recently used skills until there is a free place and room in the
// budget; they are returned, least recently used first. A skill larger
// than the whole budget is refused with a *TooLargeError and nothing
// changes.
func (l *Loaded) Load(name string, tokens int) (unloaded []Item, err error) {
	if i := l.index(name); i >= 0 {
		it := l.items[i]
		l.items = append(slices.Delete(l.items, i, i+1), it)
		return nil, nil
	}
	if tokens > l.Budget {
		return nil, &TooLargeError{Name: name, Tokens: tokens, Budget: l.Budget}
	}
	for len(l.items) > 0 && (len(l.items) >= max(l.Max, 1) || l.Tokens()+tokens > l.Budget) {
		unloaded = append(unloaded, l.items[0])
		l.items = l.items[1:]
	}
	l.items = append(l.items, Item{Name: name, Tokens: tokens})
	return unloaded, nil
}

// Resize records that a loaded skill now renders tokens (a Go skill whose
// state changed); it reports false when the skill is not loaded.
func (l *Loaded) Resize(name string, tokens int) bool {
	i := l.index(name)
	if i >= 0 {
		l.items[i].Tokens = tokens
	}
	return i >= 0
}

// Has reports whether name is loaded.
func (l *Loaded) Has(name string) bool { return l.index(name) >= 0 }

// Active is the skill loaded or re-activated last ("" when none is).
func (l *Loaded) Active() string {
	if len(l.items) == 0 {
		return ""
	}
	return l.items[len(l.items)-1].Name
}

// Items returns the loaded skills, least recently used first.
func (l *Loaded) Items() []Item { return slices.Clone(l.items) }

// Names returns the loaded skills' names, least recently used first.
func (l *Loaded) Names() []string {
	out := make([]string, len(l.items))
	for i, it := range l.items {
		out[i] = it.Name
	}
	return out
}

// Tokens is what all loaded skills render together.
func (l *Loaded) Tokens() int {
	n := 0
	for _, it := range l.items {
		n += it.Tokens
	}
	return n
}

func (l *Loaded) index(name string) int {
	return slices.IndexFunc(l.items, func(it Item) bool { return it.Name == name })
}
