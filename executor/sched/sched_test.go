package sched_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/skilld/skilld/executor/sched"
)

// item is what the tests queue: a workspace and a number.
type item struct {
	ws string
	n  int
}

func (i item) String() string { return fmt.Sprintf("%s%d", i.ws, i.n) }

func is(want item) func(item) bool { return func(v item) bool { return v == want } }

// drain takes places until none is given, and returns what got them.
func drain(s *sched.Scheduler[item]) []string {
	var out []string
	for {
		v, ws, ok := s.Next()
		if !ok {
			return out
		}
		if ws != v.ws {
			panic("Next returned another workspace than the item's")
		}
		out = append(out, v.String())
	}
}

func push(s *sched.Scheduler[item], ws string, capacity int, ns ...int) {
	for _, n := range ns {
		s.Push(ws, capacity, item{ws, n})
	}
}

func TestOneWorkspaceIsFirstComeFirstServed(t *testing.T) {
	s := sched.New[item](2)
	push(s, "a", 0, 1, 2, 3, 4)
	if got := drain(s); !slices.Equal(got, []string{"a1", "a2"}) {
		t.Fatalf("first places went to %v", got)
	}
	s.Release("a")
	if got := drain(s); !slices.Equal(got, []string{"a3"}) {
		t.Fatalf("the freed place went to %v", got)
	}
	if s.Waiting() != 1 || s.Held() != 2 {
		t.Errorf("waiting %d, held %d", s.Waiting(), s.Held())
	}
}

// The operator's case: three places, workspace b holding all of them with
// twenty more queued, then a's one task. a gets the first place that
// frees, and b the ones after.
func TestAWorkspaceWaitsForOnePlace(t *testing.T) {
	s := sched.New[item](3)
	for range 3 {
		if !s.TryStart("b", 0) {
			t.Fatal("a free place was refused")
		}
	}
	push(s, "b", 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20)
	s.Push("a", 0, item{"a", 1})
	if p := s.Position(is(item{"a", 1})); p != 1 {
		t.Errorf("a's task is at position %d, want 1", p)
	}
	if p := s.Position(is(item{"b", 1})); p != 2 {
		t.Errorf("b's first queued task is at position %d, want 2", p)
	}
	s.Release("b")
	if got := drain(s); !slices.Equal(got, []string{"a1"}) {
		t.Fatalf("the first free place went to %v, want a1", got)
	}
	s.Release("b")
	if got := drain(s); !slices.Equal(got, []string{"b1"}) {
		t.Fatalf("the second free place went to %v, want b1", got)
	}
}

// A workspace that was served just now goes behind the others, even when
// it queues again at once: it cannot take every place by queuing one
// task at a time.
func TestServedWorkspaceGoesLast(t *testing.T) {
	s := sched.New[item](1)
	push(s, "b", 0, 1, 2, 3)
	push(s, "a", 0, 1)
	if got := drain(s); !slices.Equal(got, []string{"b1"}) {
		t.Fatalf("got %v", got)
	}
	s.Release("b")
	if got := drain(s); !slices.Equal(got, []string{"a1"}) {
		t.Fatalf("got %v", got)
	}
	push(s, "a", 0, 2) // a queues again while a1 runs
	s.Release("a")
	if got := drain(s); !slices.Equal(got, []string{"b2"}) {
		t.Fatalf("after a's turn the place went to %v, want b2", got)
	}
	s.Release("b")
	if got := drain(s); !slices.Equal(got, []string{"a2"}) {
		t.Fatalf("got %v", got)
	}
}

func TestRoundRobin(t *testing.T) {
	s := sched.New[item](100)
	push(s, "a", 0, 1, 2, 3)
	push(s, "b", 0, 1)
	push(s, "c", 0, 1, 2)
	want := []string{"a1", "b1", "c1", "a2", "c2", "a3"}
	for i, w := range want {
		v := item{ws: w[:1], n: int(w[1] - '0')}
		if p := s.Position(is(v)); p != i+1 {
			t.Errorf("%s at position %d, want %d", w, p, i+1)
		}
	}
	if got := drain(s); !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}

func TestCaps(t *testing.T) {
	s := sched.New[item](4)
	push(s, "a", 1, 1, 2, 3)
	push(s, "b", 0, 1, 2, 3)
	if got := drain(s); !slices.Equal(got, []string{"a1", "b1", "b2", "b3"}) {
		t.Fatalf("with a capped at 1: %v", got)
	}
	s.Release("b")
	if got := drain(s); len(got) != 0 {
		t.Fatalf("a place went to %v while a is at its cap", got)
	}
	s.Release("a")
	if got := drain(s); !slices.Equal(got, []string{"a2"}) {
		t.Fatalf("got %v", got)
	}
	// Raising the cap lets a take the free place at once.
	s.SetCap("a", 2)
	if got := drain(s); !slices.Equal(got, []string{"a3"}) {
		t.Fatalf("after raising a's cap: %v", got)
	}
}

func TestTryStart(t *testing.T) {
	s := sched.New[item](2)
	push(s, "a", 1, 1, 2)
	if got := drain(s); !slices.Equal(got, []string{"a1"}) {
		t.Fatalf("got %v", got)
	}
	if s.TryStart("a", 1) {
		t.Error("a started past its cap")
	}
	// a's queued task cannot take the free place, so b's new one may.
	if !s.TryStart("b", 0) {
		t.Error("b could not take a place nothing waiting could take")
	}
	if s.TryStart("c", 0) {
		t.Error("c started with no place free")
	}
	s.Release("b")
	s.SetCap("a", 2)
	// Now a's queued task may take the free place: a new task may not
	// jump it.
	if s.TryStart("c", 0) {
		t.Error("c took the place a waiting task may take")
	}
	if got := drain(s); !slices.Equal(got, []string{"a2"}) {
		t.Fatalf("got %v", got)
	}
}

func TestPushFirst(t *testing.T) {
	s := sched.New[item](1)
	push(s, "a", 1, 1, 2)
	if got := drain(s); !slices.Equal(got, []string{"a1"}) {
		t.Fatalf("got %v", got)
	}
	push(s, "b", 0, 1)
	s.PushFirst("a", 1, item{"a", 9})
	s.PushFirst("c", 0, item{"c", 9})
	if p := s.Position(is(item{"c", 9})); p != 2 {
		t.Errorf("c9 at position %d, want 2", p)
	}
	if p := s.Position(is(item{"b", 1})); p != 3 {
		t.Errorf("b1 at position %d, want 3", p)
	}
	s.Release("a")
	// a9 comes first of all, within a's cap.
	if got := drain(s); !slices.Equal(got, []string{"a9"}) {
		t.Fatalf("got %v", got)
	}
	s.Release("a")
	if got := drain(s); !slices.Equal(got, []string{"c9"}) {
		t.Fatalf("got %v", got)
	}
	s.Release("c")
	if got := drain(s); !slices.Equal(got, []string{"b1"}) {
		t.Fatalf("got %v", got)
	}
}

func TestRemove(t *testing.T) {
	s := sched.New[item](1)
	push(s, "a", 0, 1, 2)
	push(s, "b", 0, 1)
	s.PushFirst("c", 0, item{"c", 1})
	for _, v := range []item{{"a", 2}, {"b", 1}, {"c", 1}} {
		if !s.Remove(is(v)) {
			t.Errorf("%v was not removed", v)
		}
		if s.Remove(is(v)) {
			t.Errorf("%v was removed twice", v)
		}
		if p := s.Position(is(v)); p != 0 {
			t.Errorf("removed %v at position %d", v, p)
		}
	}
	if got := drain(s); !slices.Equal(got, []string{"a1"}) {
		t.Fatalf("got %v", got)
	}
	s.Release("a")
	if n := len(s.Busiest(10)); n != 0 || s.Waiting() != 0 || s.Held() != 0 {
		t.Errorf("an empty scheduler reports %d workspaces, %d waiting, %d held", n, s.Waiting(), s.Held())
	}
}

func TestBusiest(t *testing.T) {
	s := sched.New[item](3)
	s.TryStart("c", 0)
	push(s, "a", 0, 1)
	push(s, "b", 0, 1, 2)
	// a1 and b1 take the two places left.
	drain(s)
	push(s, "d", 0, 1, 2)
	got := s.Busiest(3)
	want := []sched.Load{{Workspace: "d", Waiting: 2}, {Workspace: "b", Waiting: 1, Held: 1}, {Workspace: "a", Held: 1}}
	if !slices.Equal(got, want) {
		t.Errorf("busiest %+v, want %+v", got, want)
	}
}

// Positions say the order places are given in, whatever was queued how:
// a random mix of pushes, pushes ahead, starts and removals, then every
// waiting item's position against the order Next gives them.
func TestPositionsPredictTheOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		s := sched.New[item](4)
		var waiting []item
		n := 0
		for range r.IntN(60) {
			ws := string(rune('a' + r.IntN(6)))
			n++
			v := item{ws, n}
			switch op := r.IntN(10); {
			case op < 6:
				s.Push(ws, 0, v)
				waiting = append(waiting, v)
			case op < 7:
				s.PushFirst(ws, 0, v)
				waiting = append(waiting, v)
			case op < 8 && len(waiting) > 0:
				i := r.IntN(len(waiting))
				s.Remove(is(waiting[i]))
				waiting = slices.Delete(waiting, i, i+1)
			default:
				if got, gotWS, ok := s.Next(); ok {
					waiting = slices.DeleteFunc(waiting, is(got))
					s.Release(gotWS)
				}
			}
		}
		want := make([]string, len(waiting))
		for _, v := range waiting {
			p := s.Position(is(v))
			if p < 1 || p > len(waiting) || want[p-1] != "" {
				t.Fatalf("round %d: %v at position %d (of %d)", round, v, p, len(waiting))
			}
			want[p-1] = v.String()
		}
		var got []string
		for {
			v, ws, ok := s.Next()
			if !ok {
				break
			}
			got = append(got, v.String())
			s.Release(ws)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: places went %v, positions said %v", round, got, want)
		}
	}
}
