package sched_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/skilld/skilld/executor/sched"
)

// pool is what the benchmarks drive: the scheduler, or the plain
// first-come-first-served queue it replaced, as the floor.
type pool interface {
	push(ws string, v int)
	next() (ws string, ok bool)
	release(ws string)
	position(v int) int
}

// fifo is one queue for every workspace, as the executor had: a slice
// appended to and taken from the front.
type fifo struct {
	places, held int
	queue        []item
}

func (f *fifo) push(ws string, v int) { f.queue = append(f.queue, item{ws, v}) }

func (f *fifo) next() (string, bool) {
	if f.held >= f.places || len(f.queue) == 0 {
		return "", false
	}
	v := f.queue[0]
	f.queue = f.queue[1:]
	f.held++
	return v.ws, true
}

func (f *fifo) release(string) { f.held-- }

func (f *fifo) position(v int) int {
	return slices.IndexFunc(f.queue, func(i item) bool { return i.n == v }) + 1
}

type fair struct {
	s   *sched.Scheduler[item]
	cap int
}

func (f fair) push(ws string, v int) { f.s.Push(ws, f.cap, item{ws, v}) }

func (f fair) next() (string, bool) {
	_, ws, ok := f.s.Next()
	return ws, ok
}

func (f fair) release(ws string) { f.s.Release(ws) }

func (f fair) position(v int) int { return f.s.Position(func(i item) bool { return i.n == v }) }

// benchPools runs fn on the floor and on the scheduler with 1 to 1,000
// workspaces (and capped), in one run, so their numbers compare.
func benchPools(b *testing.B, places int, fn func(b *testing.B, p pool, workspaces int)) {
	b.Run("fifo-floor", func(b *testing.B) { fn(b, &fifo{places: places}, 1) })
	for _, w := range []int{1, 10, 100, 1000} {
		b.Run(fmt.Sprintf("fair/workspaces=%d", w), func(b *testing.B) { fn(b, fair{s: sched.New[item](places)}, w) })
	}
	b.Run("fair/workspaces=100/cap=1", func(b *testing.B) { fn(b, fair{s: sched.New[item](places), cap: 1}, 100) })
}

// BenchmarkTurnover is one slot turnover in a full pool of 64 places with
// 1,000 tasks waiting, spread over the workspaces: a place is given back,
// a task is queued, and the next one gets the place. The workspaces take
// turns queuing.
func BenchmarkTurnover(b *testing.B) {
	const places, backlog = 64, 1000
	benchPools(b, places, func(b *testing.B, p pool, workspaces int) {
		names := make([]string, workspaces)
		for i := range names {
			names[i] = fmt.Sprint("ws-", i)
		}
		var held []string // in the order they got their places
		n := 0
		for range places + backlog {
			n++
			p.push(names[n%workspaces], n)
		}
		for {
			ws, ok := p.next()
			if !ok {
				break
			}
			held = append(held, ws)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			p.release(held[0])
			held = held[1:]
			n++
			p.push(names[n%workspaces], n)
			if ws, ok := p.next(); ok {
				held = append(held, ws)
			}
		}
	})
}

// BenchmarkPosition is the queue position of the last of 1,000 waiting
// tasks, as GET …/tasks/{id} asks it.
func BenchmarkPosition(b *testing.B) {
	const backlog = 1000
	benchPools(b, 1, func(b *testing.B, p pool, workspaces int) {
		for n := range backlog {
			p.push(fmt.Sprint("ws-", n%workspaces), n)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if p.position(backlog-1) == 0 {
				b.Fatal("not found")
			}
		}
	})
}
