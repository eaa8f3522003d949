// Package sched is the local executor's scheduling policy: which waiting
// task gets the next free place of a bounded pool.
//
// Each workspace has a line of its own, first come first served. A free
// place goes to the workspace whose last start is the oldest among those
// with a task that may start — round robin over the workspaces that have
// tasks waiting — so a workspace with one task waiting gets the very next
// place however many tasks the others have queued, and no workspace gets
// a second place while another waits for its first. A workspace may be
// capped in how many places it holds at once: at its cap its tasks wait
// while other workspaces' start.
//
// A Scheduler is not safe for concurrent use: its owner (the executor's
// pool) guards it.
package sched

import (
	"cmp"
	"slices"
	"sort"
	"strings"
)

// Scheduler holds what waits for a place, per workspace, and counts the
// places held. T is what waits (opaque to the scheduler).
type Scheduler[T any] struct {
	places int // the pool's size
	held   int // places held
	// lines are the workspaces that wait or hold places; a workspace
	// that does neither is forgotten.
	lines map[string]*line[T]
	// turns are the lines with items waiting, least recently served
	// first: the order the next places go in.
	turns []*line[T]
	// first are items that go ahead of every line (runs that held a
	// place before: resumed after a restart, or back from waiting for
	// an approval), in order; each still needs its workspace under its
	// cap.
	first []entry[T]
	// clock counts places given; a line's served is the clock of its
	// last one.
	clock uint64
}

type entry[T any] struct {
	ws string
	v  T
}

// line is one workspace's state.
type line[T any] struct {
	ws     string
	items  []T // waiting, first come first
	firsts int // items of this workspace in Scheduler.first
	held   int // places it holds
	cap    int // the most places it may hold; 0: no cap but the pool's
	served uint64
}

func (l *line[T]) underCap() bool { return l.cap <= 0 || l.held < l.cap }

func (l *line[T]) idle() bool { return len(l.items) == 0 && l.firsts == 0 && l.held == 0 }

// New returns a scheduler of a pool of places places (at least 1).
func New[T any](places int) *Scheduler[T] {
	return &Scheduler[T]{places: max(places, 1), lines: map[string]*line[T]{}}
}

// line returns ws's line, made on first use with the given cap.
func (s *Scheduler[T]) line(ws string, capacity int) *line[T] {
	l := s.lines[ws]
	if l == nil {
		l = &line[T]{ws: ws}
		s.lines[ws] = l
	}
	l.cap = capacity
	return l
}

// forget drops a line that neither waits nor holds a place.
func (s *Scheduler[T]) forget(l *line[T]) {
	if l.idle() {
		delete(s.lines, l.ws)
	}
}

// SetCap changes how many places workspace ws may hold at once (0: no
// cap). A workspace the scheduler does not know is left alone: its cap
// comes with its next item.
func (s *Scheduler[T]) SetCap(ws string, capacity int) {
	if l := s.lines[ws]; l != nil {
		l.cap = capacity
	}
}

// TryStart takes a place for a new item of workspace ws (cap: its cap)
// when one may start now: a place is free, ws is under its cap, and
// nothing waiting may start instead (a freed place goes to what waits
// first). It reports whether it took one; if not, Push the item.
func (s *Scheduler[T]) TryStart(ws string, capacity int) bool {
	if s.held >= s.places || s.startable() {
		return false
	}
	l := s.line(ws, capacity)
	if !l.underCap() {
		s.forget(l)
		return false
	}
	s.take(l)
	return true
}

// startable reports whether anything waiting could take a free place.
func (s *Scheduler[T]) startable() bool {
	for _, e := range s.first {
		if s.lines[e.ws].underCap() {
			return true
		}
	}
	for _, l := range s.turns {
		if l.underCap() {
			return true
		}
	}
	return false
}

// take gives l a place.
func (s *Scheduler[T]) take(l *line[T]) {
	s.held++
	l.held++
	s.clock++
	l.served = s.clock
}

// Push adds v at the end of workspace ws's line (cap: ws's cap).
func (s *Scheduler[T]) Push(ws string, capacity int, v T) {
	l := s.line(ws, capacity)
	l.items = append(l.items, v)
	if len(l.items) == 1 {
		s.enter(l)
	}
}

// PushFirst adds v ahead of every line, after what was pushed first
// before it: for what held a place already and should get one back
// before new work starts. It still waits for ws to be under its cap.
func (s *Scheduler[T]) PushFirst(ws string, capacity int, v T) {
	l := s.line(ws, capacity)
	l.firsts++
	s.first = append(s.first, entry[T]{ws: ws, v: v})
}

// enter puts a line that starts waiting among the turns by when it was
// last served, after lines served at the same time: one that has not
// been served for longest goes first.
func (s *Scheduler[T]) enter(l *line[T]) {
	i := sort.Search(len(s.turns), func(i int) bool { return s.turns[i].served > l.served })
	s.turns = slices.Insert(s.turns, i, l)
}

// Next takes a place for what waits next and returns it with its
// workspace; ok is false when no place is free or nothing waiting may
// take one (every waiting workspace is at its cap).
func (s *Scheduler[T]) Next() (v T, ws string, ok bool) {
	if s.held >= s.places {
		return v, "", false
	}
	for i, e := range s.first {
		l := s.lines[e.ws]
		if !l.underCap() {
			continue
		}
		s.first = slices.Delete(s.first, i, i+1)
		l.firsts--
		s.take(l)
		return e.v, e.ws, true
	}
	for i, l := range s.turns {
		if !l.underCap() {
			continue
		}
		v = l.items[0]
		var zero T
		l.items[0] = zero // let it go
		l.items = l.items[1:]
		s.take(l)
		// Served now, so it goes last, if it has more to wait for.
		s.turns = slices.Delete(s.turns, i, i+1)
		if len(l.items) > 0 {
			s.turns = append(s.turns, l)
		}
		return v, l.ws, true
	}
	return v, "", false
}

// Release gives back a place workspace ws held.
func (s *Scheduler[T]) Release(ws string) {
	l := s.lines[ws]
	if l == nil || l.held == 0 {
		return
	}
	l.held--
	s.held--
	s.forget(l)
}

// Remove takes the first waiting item match accepts out; it reports
// whether there was one.
func (s *Scheduler[T]) Remove(match func(T) bool) bool {
	for i, e := range s.first {
		if match(e.v) {
			s.first = slices.Delete(s.first, i, i+1)
			l := s.lines[e.ws]
			l.firsts--
			s.forget(l)
			return true
		}
	}
	for i, l := range s.turns {
		j := slices.IndexFunc(l.items, match)
		if j < 0 {
			continue
		}
		l.items = slices.Delete(l.items, j, j+1)
		if len(l.items) == 0 {
			s.turns = slices.Delete(s.turns, i, i+1)
			s.forget(l)
		}
		return true
	}
	return false
}

// Position is the place in line of the first waiting item match accepts,
// from 1 (next), or 0 when none waits: one more than the items that get
// a place before it as places free up, in the order Next gives them —
// everything pushed first, then the lines in turn, one item each per
// round. Caps are not foreseen: the count is as if no waiting workspace
// were at its cap (one that is lets those behind it go first).
func (s *Scheduler[T]) Position(match func(T) bool) int {
	for i, e := range s.first {
		if match(e.v) {
			return i + 1
		}
	}
	for at, l := range s.turns {
		k := slices.IndexFunc(l.items, match)
		if k < 0 {
			continue
		}
		// Round k gives it its place: each line before it in the turns
		// gets k+1 places first, each line after it k.
		ahead := len(s.first) + k
		for i, o := range s.turns {
			switch {
			case i < at:
				ahead += min(len(o.items), k+1)
			case i > at:
				ahead += min(len(o.items), k)
			}
		}
		return ahead + 1
	}
	return 0
}

// Waiting is how many items wait.
func (s *Scheduler[T]) Waiting() int {
	n := len(s.first)
	for _, l := range s.turns {
		n += len(l.items)
	}
	return n
}

// Held is how many places are held.
func (s *Scheduler[T]) Held() int { return s.held }

// Load is one workspace's share of the pool.
type Load struct {
	Workspace string
	Waiting   int // items waiting (pushed first included)
	Held      int // places held
}

// Busiest returns the n workspaces with the most items waiting, then the
// most places held (then by name, so that the answer is stable).
func (s *Scheduler[T]) Busiest(n int) []Load {
	loads := make([]Load, 0, len(s.lines))
	for _, l := range s.lines {
		loads = append(loads, Load{Workspace: l.ws, Waiting: len(l.items) + l.firsts, Held: l.held})
	}
	slices.SortFunc(loads, func(a, b Load) int {
		return cmp.Or(cmp.Compare(b.Waiting, a.Waiting), cmp.Compare(b.Held, a.Held), strings.Compare(a.Workspace, b.Workspace))
	})
	return loads[:min(n, len(loads))]
}
