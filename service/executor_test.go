package service_test

import (
	"context"
	"sync"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/service"
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
