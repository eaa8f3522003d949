package executor_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/executor"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store/storetest"
)

// TestDrainRefusesNewTasks: once Drain began, a task started through the
// service is refused before it is recorded (503, ErrDraining), one
// recorded just before is queued for the next start rather than failed,
// and the running task is let finish.
func TestDrainRefusesNewTasks(t *testing.T) {
	f := newFixture(t, storetest.Drivers(t)[0].Open)
	ag, _ := f.agentWithSkill(t, skilld.ToolPolicy{})
	release := make(chan struct{})
	f.model.steps = append(f.model.steps, func(ctx context.Context, _ *model.Request) (*model.Response, error) {
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return answer("Done.")(ctx, nil)
	})
	params := service.StartTaskParams{AgentRef: service.AgentRef{ID: ag.Name}, Input: "wait"}
	running, err := f.svc.RunTask(t.Context(), f.actor, params)
	if err != nil {
		t.Fatal(err)
	}
	f.wait(t, running.ID, skilld.TaskRunning)
	if err := f.exec.Ready(); err != nil {
		t.Fatalf("ready before the drain: %v", err)
	}
	drained := make(chan struct{})
	go func() { f.exec.Drain(time.Minute); close(drained) }()
	for deadline := time.Now().Add(10 * time.Second); f.exec.Ready() == nil; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("Ready never reported the drain")
		}
	}
	_, err = f.svc.RunTask(t.Context(), f.actor, params)
	if skilld.ErrorCode(err) != skilld.EUNAVAILABLE || !errors.Is(err, executor.ErrDraining) {
		t.Fatalf("a task started while draining: %v", err)
	}
	// Recorded before the drain was seen: it waits for the next start.
	late, err := f.svc.StartTask(t.Context(), f.actor, params)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.exec.Start(t.Context(), late); err != nil {
		t.Fatalf("Start of a recorded task while draining: %v", err)
	}
	page, err := f.svc.ListTasks(t.Context(), f.actor, service.ListTasksParams{})
	if err != nil || page.Total != 2 {
		t.Fatalf("tasks recorded: %v %v, want the running one and the late one", page, err)
	}
	close(release)
	<-drained
	f.wait(t, running.ID, skilld.TaskCompleted)
	if got := f.wait(t, late.ID, skilld.TaskQueued); got.Error != nil {
		t.Errorf("the late task: %+v", got.Error)
	}
}
