package executor_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/executor"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/storetest"
)

// TestAdoptTasksNoRunHolds: a task recorded as running, and one recorded
// as queued, that no run holds (their run is gone without ending them) are
// taken over by the executor without a restart and run to their end; a
// task whose run is alive elsewhere (a foreground run of another
// executor on the same database), beating, is left to it.
func TestAdoptTasksNoRunHolds(t *testing.T) {
	f := newFixtureWith(t, storetest.Drivers(t)[0].Open, func(c *executor.Config) {
		c.Heartbeat, c.AdoptEvery = 50*time.Millisecond, 100*time.Millisecond
	})
	ag, _ := f.agentWithSkill(t, skilld.ToolPolicy{})
	started := make(chan struct{})
	f.model.steps = append(f.model.steps,
		func(ctx context.Context, req *model.Request) (*model.Response, error) {
			close(started)
			// Long enough for many beats and looks.
			time.Sleep(1500 * time.Millisecond)
			return answer("live")(ctx, req)
		}, answer("adopted"), answer("adopted"))
	if err := f.exec.Recover(t.Context()); err != nil {
		t.Fatal(err)
	}
	start := service.StartTaskParams{AgentRef: service.AgentRef{ID: ag.ID}, Input: "go"}
	live, err := f.svc.StartTask(t.Context(), f.actor, start)
	if err != nil {
		t.Fatal(err)
	}
	elsewhere := executor.New(executor.Config{Service: f.svc, DB: f.db, Blobs: f.svc.Packages().Blobs, Sandboxes: f.sbx, Heartbeat: 50 * time.Millisecond,
		OpenModel: func(string) (model.Model, string, error) { return f.model, "m", nil },
		Tokenizer: func(string) (agent.Counter, error) { return words{}, nil },
		Window:    func(string) (int, bool) { return 100000, true }})
	ran := make(chan error, 1)
	go func() {
		_, err := elsewhere.Run(context.WithoutCancel(t.Context()), live, executor.RunOptions{})
		ran <- err
	}()
	<-started
	// Recorded, never handed to an executor: as a run that vanished
	// leaves them.
	queued, err := f.svc.StartTask(t.Context(), f.actor, start)
	if err != nil {
		t.Fatal(err)
	}
	running, err := f.svc.StartTask(t.Context(), f.actor, start)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	if _, err := f.db.TaskUpdate(t.Context(), &store.TaskUpdateParams{ID: running.ID, ExpectedStatus: skilld.TaskQueued, Status: skilld.TaskRunning, StartedAt: &now}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{queued.ID, running.ID} {
		if got := f.wait(t, id, skilld.TaskCompleted); got.Output != "adopted" {
			t.Errorf("task %s: %+v", id, got)
		}
	}
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	f.wait(t, live.ID, skilld.TaskCompleted)
	events, err := f.svc.TaskEvents(t.Context(), f.actor, service.TaskEventsParams{TaskRef: service.TaskRef{ID: live.ID}})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if strings.Contains(string(e.Payload), agent.EventTaskResumed) {
			t.Errorf("the live task was taken over: %s", e.Payload)
		}
	}
}
