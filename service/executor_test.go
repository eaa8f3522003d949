package service_test

import (
	"context"
	"sync"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/storetest"
)

// recorder is an executor that records what it is handed.
type recorder struct {
	svc     *service.Service
	mu      sync.Mutex
	started []string
}

func (r *recorder) Start(_ context.Context, t *skilld.Task) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.started = append(r.started, t.ID)
	return nil
}
func (r *recorder) Cancel(context.Context, string) (bool, error) { return false, nil }
func (r *recorder) Decide(context.Context, string, string, bool) error {
	return skilld.Errorf(skilld.ENOTFOUND, "no call waits")
}

// TestServiceMakesItsExecutor: the executor is made by service.New, once,
// for the service New returns, and started tasks go to it from the first;
// without one they stay queued.
func TestServiceMakesItsExecutor(t *testing.T) {
	var made []*recorder
	e := newEnv(t, storetest.Drivers(t)[0].Open, service.Config{Executor: func(s *service.Service) service.Executor {
		r := &recorder{svc: s}
		made = append(made, r)
		return r
	}}, nil)
	if len(made) != 1 || made[0].svc != e.svc {
		t.Fatalf("New made %d executors (want 1, for the service it returned)", len(made))
	}
	ag, err := e.svc.CreateAgent(t.Context(), e.member, service.AgentParams{Name: "a", Config: skilld.AgentConfig{Model: "openai:gpt-4o-mini"}})
	if err != nil {
		t.Fatal(err)
	}
	task, err := e.svc.RunTask(t.Context(), e.member, service.StartTaskParams{AgentRef: service.AgentRef{ID: ag.ID}, Input: "go"})
	if err != nil {
		t.Fatal(err)
	}
	if len(made[0].started) != 1 || made[0].started[0] != task.ID {
		t.Errorf("the executor was handed %v, want [%s]", made[0].started, task.ID)
	}

	plain := service.New(e.db, e.blobs, nil, service.Config{})
	queued, err := plain.RunTask(t.Context(), e.member, service.StartTaskParams{AgentRef: service.AgentRef{ID: ag.ID}, Input: "go"})
	if err != nil || queued.Status != skilld.TaskQueued || len(made[0].started) != 1 {
		t.Errorf("a service without an executor: %+v %v", queued, err)
	}
}

// cutter is an executor whose Start takes the database away, as a task's
// first step can when the database goes as it starts.
type cutter struct {
	recorder
	outage *storetest.Outage
}

func (c *cutter) Start(ctx context.Context, t *skilld.Task) error {
	c.outage.Cut()
	return c.recorder.Start(ctx, t)
}

// TestRunTaskStartedDuringOutage: once the executor has the task, a failed
// read of it must not answer "unavailable, retry": the caller would start
// it a second time. RunTask answers with the task as it was recorded.
func TestRunTaskStartedDuringOutage(t *testing.T) {
	url, outage := storetest.PostgresOutage(t)
	c := &cutter{outage: outage}
	e := newEnv(t, func(t *testing.T) store.Store { return storetest.OpenPostgresAt(t, url) },
		service.Config{Executor: func(*service.Service) service.Executor { return c }}, nil)
	ag, err := e.svc.CreateAgent(t.Context(), e.member, service.AgentParams{Name: "a", Config: skilld.AgentConfig{Model: "openai:gpt-4o-mini"}})
	if err != nil {
		t.Fatal(err)
	}
	task, err := e.svc.RunTask(t.Context(), e.member, service.StartTaskParams{AgentRef: service.AgentRef{ID: ag.ID}, Input: "go"})
	outage.Restore()
	if err != nil {
		t.Fatalf("a started task answered with %v: a retry would start it twice", err)
	}
	if len(c.started) != 1 || c.started[0] != task.ID || task.Status != skilld.TaskQueued {
		t.Errorf("RunTask answered %s (%s); the executor was handed %v", task.ID, task.Status, c.started)
	}
}
