package executor

import (
	"context"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/sandbox"
	"github.com/skilld/skilld/service"
)

// Observer watches task runs from the one place their events pass, for
// metrics and traces, so the executor needs to know nothing of either.
// Its methods are called from the runs' goroutines and must not block.
type Observer interface {
	// RunStarted is called as a run of a task begins (a fresh start or a
	// resume); ctx carries what the task was started under (the API
	// request's trace, when it was started by one).
	RunStarted(ctx context.Context, run RunInfo) RunObserver
	// StorageError sees every failed attempt of a storage write the
	// executor waits out (what names the write); it picks the errors
	// it counts.
	StorageError(what string, err error)
}

// RunInfo describes a run to its observer.
type RunInfo struct {
	TaskID string
	// Model is the agent's model reference ("openai:gpt-4o-mini"), and
	// Provider its provider ("openai"); both "" when unknown.
	Model, Provider string
}

// RunObserver sees one run.
type RunObserver interface {
	// Event sees each event the run delivers live (replayed ones are not
	// delivered again, so nothing is counted twice across a resume).
	Event(ev agent.Event)
	// SandboxExec sees each command the run's shell tool ran.
	SandboxExec(res *sandbox.Result, err error)
	// Ended is called once, when the run stops: outcome is the task's
	// final status, or "suspended" (to be resumed) or "fenced" (another
	// run took the task over).
	Ended(outcome string)
}

// noObserver is the Observer of an executor configured without one.
type noObserver struct{}

func (noObserver) RunStarted(context.Context, RunInfo) RunObserver { return noObserver{} }
func (noObserver) StorageError(string, error)                      {}
func (noObserver) Event(agent.Event)                               {}
func (noObserver) SandboxExec(*sandbox.Result, error)              {}
func (noObserver) Ended(string)                                    {}

func (l *Local) observer() Observer {
	if l.cfg.Observer == nil {
		return noObserver{}
	}
	return l.cfg.Observer
}

// observeRun tells the observer that a run of t begins.
func (l *Local) observeRun(ctx context.Context, t *skilld.Task) RunObserver {
	info := RunInfo{TaskID: t.ID}
	if snap, err := service.TaskSnapshot(t); err == nil {
		info.Model = snap.Model
		info.Provider, _, _ = strings.Cut(snap.Model, ":")
	}
	return l.observer().RunStarted(ctx, info)
}

// observedSandbox shows each command the run's shell tool runs to the run's
// observer (durations, limit kills); everything else passes through.
type observedSandbox struct {
	sandbox.Sandbox
	obs RunObserver
}

func (s observedSandbox) Exec(ctx context.Context, p sandbox.ExecParams) (*sandbox.Result, error) {
	res, err := s.Sandbox.Exec(ctx, p)
	s.obs.SandboxExec(res, err)
	return res, err
}

// Environment passes to the sandbox's, when it installs dependencies.
func (s observedSandbox) Environment(ctx context.Context, dir string, pkg *pack.Package, progress func(sandbox.EnvironmentProgress)) (*sandbox.Environment, error) {
	envs, ok := s.Sandbox.(sandbox.Environments)
	if !ok {
		return nil, skilld.Errorf(skilld.EUNAVAILABLE, "this server's sandbox does not install skills' dependencies")
	}
	return envs.Environment(ctx, dir, pkg, progress)
}

// Observers is several observers as one (metrics and traces).
type Observers []Observer

func (obs Observers) RunStarted(ctx context.Context, info RunInfo) RunObserver {
	runs := make(runObservers, len(obs))
	for i, o := range obs {
		runs[i] = o.RunStarted(ctx, info)
	}
	return runs
}

func (obs Observers) StorageError(what string, err error) {
	for _, o := range obs {
		o.StorageError(what, err)
	}
}

type runObservers []RunObserver

func (rs runObservers) Event(ev agent.Event) {
	for _, r := range rs {
		r.Event(ev)
	}
}

func (rs runObservers) SandboxExec(res *sandbox.Result, err error) {
	for _, r := range rs {
		r.SandboxExec(res, err)
	}
}

func (rs runObservers) Ended(outcome string) {
	for _, r := range rs {
		r.Ended(outcome)
	}
}
