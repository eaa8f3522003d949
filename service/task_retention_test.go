package service_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/storetest"
)

// TestTaskRetention: with the server's retention of a day, a pass on a
// clock two days on deletes the finished tasks, their logs and output
// blobs, at most a batch at a time, and leaves fsck clean; tasks still
// going stay, and so do the tasks of a workspace that keeps them forever.
// Two servers sweeping one database at once delete each task once.
func TestTaskRetention(t *testing.T) {
	forDrivers(t, func(t *testing.T, open storetest.Opener) {
		var later atomic.Bool
		clock := func() time.Time {
			if later.Load() {
				return time.Now().Add(48 * time.Hour)
			}
			return time.Now()
		}
		e := newEnv(t, open, service.Config{TaskRetention: 24 * time.Hour, Now: clock}, nil)
		ctx := t.Context()
		team := must[*skilld.Agent](t)(e.svc.CreateAgent(ctx, e.member, service.AgentParams{Name: "a", Config: skilld.AgentConfig{Model: "test:m"}}))
		other := must[*skilld.Agent](t)(e.svc.CreateAgent(ctx, e.other, service.AgentParams{Name: "a", Config: skilld.AgentConfig{Model: "test:m"}}))
		forever := "0"
		otherWS := must[service.Actor](t)(e.svc.In(ctx, e.root, "other"))
		must[*skilld.Workspace](t)(e.svc.UpdateWorkspace(ctx, otherWS, service.UpdateWorkspaceParams{TaskRetention: &forever}))

		var expired []*skilld.Task
		var outputs []string
		for i, st := range []skilld.TaskStatus{skilld.TaskCompleted, skilld.TaskFailed, skilld.TaskCancelled} {
			task, out := e.ranTask(t, e.member, team.ID, st, "output "+string(rune('a'+i)))
			expired, outputs = append(expired, task), append(outputs, out)
		}
		running, _ := e.ranTask(t, e.member, team.ID, skilld.TaskRunning, "still going")
		kept, _ := e.ranTask(t, e.other, other.ID, skilld.TaskCompleted, "kept forever")

		// Nothing has expired yet.
		if n, err := e.svc.DeleteExpiredTasks(ctx, 10); n != 0 || err != nil {
			t.Fatalf("a pass before the retention ran out deleted %d (%v)", n, err)
		}
		later.Store(true)
		if n, err := e.svc.DeleteExpiredTasks(ctx, 2); n != 2 || err != nil {
			t.Fatalf("a pass of 2 deleted %d (%v)", n, err)
		}
		// The rest, by two servers on the same database at once.
		second := service.New(e.db, e.blobs, nil, service.Config{TaskRetention: 24 * time.Hour, Now: clock})
		var wg sync.WaitGroup
		var total atomic.Int64
		for _, s := range []*service.Service{e.svc, second} {
			wg.Go(func() {
				n, err := s.DeleteExpiredTasks(ctx, 10)
				if err != nil {
					t.Error(err)
				}
				total.Add(int64(n))
			})
		}
		wg.Wait()
		if total.Load() != 1 {
			t.Errorf("two passes at once deleted %d tasks, want the 1 left", total.Load())
		}
		for i, task := range expired {
			if _, err := e.db.TaskGet(ctx, &store.TaskGetParams{ID: task.ID}); skilld.ErrorCode(err) != skilld.ENOTFOUND {
				t.Errorf("expired %s task: %v", task.Status, err)
			}
			if entries := must[[]*skilld.TaskLogEntry](t)(e.db.TaskLogList(ctx, &store.TaskLogListParams{TaskID: task.ID})); len(entries) != 0 {
				t.Errorf("expired %s task left %d log entries", task.Status, len(entries))
			}
			if !blobGone(t, e.blobs, outputs[i]) {
				t.Errorf("the output of the expired %s task is still stored", task.Status)
			}
		}
		for _, task := range []*skilld.Task{running, kept} {
			if _, err := e.db.TaskGet(ctx, &store.TaskGetParams{ID: task.ID}); err != nil {
				t.Errorf("%s task: %v", task.Status, err)
			}
		}
		e.fsckClean(t)
	})
}

// TestSweepTasks: the sweeper passes at once, reports what each pass did,
// and returns when its context ends.
func TestSweepTasks(t *testing.T) {
	e := newEnv(t, storetest.Drivers(t)[0].Open, service.Config{TaskRetention: time.Hour,
		Now: func() time.Time { return time.Now().Add(2 * time.Hour) }}, nil)
	ag := must[*skilld.Agent](t)(e.svc.CreateAgent(t.Context(), e.member, service.AgentParams{Name: "a", Config: skilld.AgentConfig{Model: "test:m"}}))
	e.ranTask(t, e.member, ag.ID, skilld.TaskCompleted, "out")
	ctx, cancel := context.WithCancel(t.Context())
	reports := make(chan int, 1)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		e.svc.SweepTasks(ctx, service.TaskSweep{Interval: time.Hour, Report: func(n int, err error) {
			if err != nil {
				t.Error(err)
			}
			select {
			case reports <- n:
			default:
			}
		}})
	}()
	if n := <-reports; n != 1 {
		t.Errorf("the first pass deleted %d tasks, want 1", n)
	}
	cancel()
	<-stopped
	e.fsckClean(t)
}

// TestWorkspaceRetentionSetting: instance admins set a workspace's
// retention; what is not a duration, or is shorter than a minute, is
// refused naming the field; "" returns to the server's.
func TestWorkspaceRetentionSetting(t *testing.T) {
	e := newEnv(t, storetest.Drivers(t)[0].Open, service.Config{}, nil)
	ctx := t.Context()
	team := must[service.Actor](t)(e.svc.In(ctx, e.root, "team"))
	set := func(a service.Actor, v string) (*skilld.Workspace, error) {
		return e.svc.UpdateWorkspace(ctx, a, service.UpdateWorkspaceParams{TaskRetention: &v})
	}
	if w := must[*skilld.Workspace](t)(set(team, "720h")); w.TaskRetention != "720h" || w.Name != "team" {
		t.Errorf("set: %+v", w)
	}
	if w := must[*skilld.Workspace](t)(e.svc.UpdateWorkspace(ctx, team, service.UpdateWorkspaceParams{})); w.TaskRetention != "720h" {
		t.Errorf("an empty update changed the retention: %+v", w)
	}
	for _, bad := range []string{"a week", "30s", "-1h"} {
		_, err := set(team, bad)
		wantCode(t, err, skilld.EINVALID)
		if se, _ := err.(*skilld.Error); se == nil || len(se.Details) != 1 || se.Details[0].Field != "task_retention" {
			t.Errorf("%q refused with %v", bad, err)
		}
	}
	if w := must[*skilld.Workspace](t)(set(team, "0")); w.TaskRetention != "0" {
		t.Errorf("forever: %+v", w)
	}
	if w := must[*skilld.Workspace](t)(set(team, "")); w.TaskRetention != "" {
		t.Errorf("back to the server's: %+v", w)
	}
	_, err := set(e.admin, "1h")
	wantCode(t, err, skilld.EFORBIDDEN)
}
