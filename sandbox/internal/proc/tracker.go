package proc

import (
	"context"
	"sync"

	"github.com/skilld/skilld"
)

// Tracker follows a sandbox's running commands, so removing the sandbox
// can stop them first and no command starts in a removed one.
type Tracker struct {
	mu      sync.Mutex
	running map[*context.CancelFunc]struct{}
	wg      sync.WaitGroup
	closed  bool
}

// Begin registers a command; call done when it has ended. It fails with
// EUNAVAILABLE once the sandbox is closed. Cancelling the returned context
// is how Close stops the command.
func (t *Tracker) Begin(ctx context.Context, id string) (context.Context, func(), error) {
	ctx, cancel := context.WithCancel(ctx)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		cancel()
		return nil, nil, skilld.Errorf(skilld.EUNAVAILABLE, "sandbox %s was removed", id)
	}
	if t.running == nil {
		t.running = map[*context.CancelFunc]struct{}{}
	}
	t.running[&cancel] = struct{}{}
	t.wg.Add(1)
	return ctx, func() {
		cancel()
		t.mu.Lock()
		delete(t.running, &cancel)
		t.mu.Unlock()
		t.wg.Done()
	}, nil
}

// Closed reports whether Close was called.
func (t *Tracker) Closed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.closed
}

// Close stops every running command and waits until they have ended.
func (t *Tracker) Close() {
	t.mu.Lock()
	t.closed = true
	for c := range t.running {
		(*c)()
	}
	t.mu.Unlock()
	t.wg.Wait()
}
