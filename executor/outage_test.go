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

// TestTaskOutlivesDatabaseOutage: PostgreSQL goes away in the middle of a
// task, right as the model asks for a skill, and comes back a second
// later. The task waits it out — its log appends and the skill's package
// read retry — and completes with nothing lost.
func TestTaskOutlivesDatabaseOutage(t *testing.T) {
	url, outage := storetest.PostgresOutage(t)
	f := newFixture(t, func(t *testing.T) store.Store { return storetest.OpenPostgresAt(t, url) })
	ag, sk := f.agentWithSkill(t, skilld.ToolPolicy{})
	back := make(chan struct{})
	var activation string
	f.model.steps = append(f.model.steps,
		func(ctx context.Context, _ *model.Request) (*model.Response, error) {
			outage.Cut()
			go func() {
				time.Sleep(time.Second)
				outage.Restore()
				close(back)
			}()
			return call(agent.ActivateSkill, map[string]string{"skill_name": sk.Name})(ctx, nil)
		},
		func(_ context.Context, req *model.Request) (*model.Response, error) {
			activation = req.Messages[len(req.Messages)-1].Content
			return answer("done")(nil, req)
		})
	task, err := f.svc.RunTask(t.Context(), f.actor, service.StartTaskParams{AgentRef: service.AgentRef{ID: ag.ID}, Input: "go"})
	if err != nil {
		t.Fatal(err)
	}
	<-back
	f.wait(t, task.ID, skilld.TaskCompleted)
	if !strings.HasPrefix(activation, "<skill_content") {
		t.Errorf("activation across the outage: %.200s", activation)
	}
	entries, err := f.svc.TaskEvents(t.Context(), f.actor, service.TaskEventsParams{TaskRef: service.TaskRef{ID: task.ID}})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i, e := range entries {
		if e.Seq != int64(i+1) {
			t.Errorf("entry %d has seq %d: a gap", i, e.Seq)
		}
		if seen[string(e.Payload)] {
			t.Errorf("entry %d repeats an earlier one: %s", e.Seq, e.Payload)
		}
		seen[string(e.Payload)] = true
	}
	if last := entries[len(entries)-1]; !strings.Contains(string(last.Payload), agent.EventTaskCompleted) {
		t.Errorf("log ends with %s", last.Payload)
	}
}

// TestTaskEndsAfterLongOutage: PostgreSQL goes away as the model answers,
// for longer than a task waits out storage. The run fails (its log cannot
// take the answer) and its end cannot be recorded either; once the
// database is back the end is recorded without a restart: the task is
// failed, naming the write, never left running with nothing running it.
func TestTaskEndsAfterLongOutage(t *testing.T) {
	url, outage := storetest.PostgresOutage(t)
	f := newFixtureWith(t, func(t *testing.T) store.Store { return storetest.OpenPostgresAt(t, url) },
		func(c *executor.Config) { c.StorageRetry = 500 * time.Millisecond })
	ag, _ := f.agentWithSkill(t, skilld.ToolPolicy{})
	back := make(chan struct{})
	f.model.steps = append(f.model.steps, func(ctx context.Context, req *model.Request) (*model.Response, error) {
		outage.Cut()
		go func() {
			// Past the run's wait for its log and its end's first wait.
			time.Sleep(3 * time.Second)
			outage.Restore()
			close(back)
		}()
		return answer("done")(ctx, req)
	})
	task, err := f.svc.RunTask(t.Context(), f.actor, service.StartTaskParams{AgentRef: service.AgentRef{ID: ag.ID}, Input: "go"})
	if err != nil {
		t.Fatal(err)
	}
	<-back
	got := f.wait(t, task.ID, skilld.TaskFailed)
	if got.Error == nil || !strings.Contains(got.Error.Message, "task log") {
		t.Errorf("the task's error: %+v", got.Error)
	}
}
