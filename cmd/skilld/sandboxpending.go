package main

import (
	"context"

	"github.com/skilld/skilld/sandbox"
)

// pendingSandboxes is serve's sandbox provider while it is being opened:
// opening bwrap runs a sandboxed command to learn what the machine
// enforces (a loop-mounted file system, cgroups, a user namespace), which
// takes longer than everything else serve does before it listens. It is
// opened in the background instead, and whatever needs a sandbox waits
// for the outcome: the provider, or the error that disables tasks.
type pendingSandboxes struct {
	done chan struct{}
	sbx  *sandboxes // set, or err, when done is closed
	err  error
}

// openSandboxes starts open and returns at once.
func openSandboxes(open func() (*sandboxes, error)) *pendingSandboxes {
	p := &pendingSandboxes{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.sbx, p.err = open()
	}()
	return p
}

// wait returns the opened provider, or why there is none.
func (p *pendingSandboxes) wait(ctx context.Context) (*sandboxes, error) {
	select {
	case <-p.done:
		return p.sbx, p.err
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// close closes the provider once it is open (or failed to open).
func (p *pendingSandboxes) close() {
	<-p.done
	if p.sbx != nil {
		p.sbx.close()
	}
}

func (p *pendingSandboxes) Name() string {
	if sbx, err := p.wait(context.Background()); err == nil {
		return sbx.Name()
	}
	return "none"
}

func (p *pendingSandboxes) Info() sandbox.Info {
	if sbx, err := p.wait(context.Background()); err == nil {
		return sbx.Info()
	}
	return sandbox.Info{}
}

func (p *pendingSandboxes) Create(ctx context.Context, params sandbox.CreateParams) (sandbox.Sandbox, error) {
	sbx, err := p.wait(ctx)
	if err != nil {
		return nil, err
	}
	return sbx.Create(ctx, params)
}

// List lists the provider's sandboxes when it can (executor.Recover
// sweeps those of ended tasks).
func (p *pendingSandboxes) List(ctx context.Context) ([]string, error) {
	sbx, err := p.wait(ctx)
	if err != nil {
		return nil, err
	}
	if l, ok := sbx.Provider.(sandbox.Lister); ok {
		return l.List(ctx)
	}
	return nil, nil
}

var (
	_ sandbox.Provider = (*pendingSandboxes)(nil)
	_ sandbox.Lister   = (*pendingSandboxes)(nil)
)
