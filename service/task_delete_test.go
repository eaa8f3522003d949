package service_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/blob"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/storetest"
)

// ranTask records a task of agent as a run that logged and stored a large
// output and then ended (status) would have left it, and returns it with
// the output's digest.
func (e *env) ranTask(t *testing.T, a service.Actor, agentID string, status skilld.TaskStatus, output string) (*skilld.Task, string) {
	t.Helper()
	ctx := t.Context()
	task := must[*skilld.Task](t)(e.svc.StartTask(ctx, a, service.StartTaskParams{AgentRef: service.AgentRef{ID: agentID}, Input: "go"}))
	for _, kind := range []string{"message", "event"} {
		must[*skilld.TaskLogEntry](t)(e.db.TaskLogAppend(ctx, &store.TaskLogAppendParams{TaskID: task.ID, Kind: kind, Payload: json.RawMessage(`{}`)}))
	}
	out := must[blob.Info](t)(e.blobs.Put(ctx, strings.NewReader(output)))
	if err := e.db.TaskOutputAdd(ctx, &store.TaskOutputParams{TaskID: task.ID, Digest: out.Digest}); err != nil {
		t.Fatal(err)
	}
	p := &store.TaskUpdateParams{ID: task.ID, Status: status}
	if status.Done() {
		at := time.Now().UTC()
		p.FinishedAt = &at
	}
	return must[*skilld.Task](t)(e.db.TaskUpdate(ctx, p)), out.Digest
}

// fsckClean fails the test unless fsck finds the storage consistent with
// no unreferenced blob.
func (e *env) fsckClean(t *testing.T) {
	t.Helper()
	rep := must[*service.FsckReport](t)(e.svc.Fsck(t.Context(), e.root, service.FsckParams{}))
	if !rep.OK() || len(rep.Unreferenced) != 0 {
		t.Errorf("fsck: damaged %v, missing %v, bad packages %v, unreferenced %v", rep.Damaged, rep.Missing, rep.BadPackages, rep.Unreferenced)
	}
}

func blobGone(t *testing.T, b blob.Store, digest string) bool {
	t.Helper()
	_, err := b.Stat(t.Context(), digest)
	if err != nil && skilld.ErrorCode(err) != skilld.ENOTFOUND {
		t.Fatal(err)
	}
	return err != nil
}

// TestDeleteTask: a finished task goes with its log and its outputs' blobs
// (a blob another task still uses stays), leaving fsck clean; only admins
// and the task's starter may, and a task still going is refused until it
// is cancelled.
func TestDeleteTask(t *testing.T) {
	forDrivers(t, func(t *testing.T, open storetest.Opener) {
		e := newEnv(t, open, service.Config{}, nil)
		ctx := t.Context()
		ag := must[*skilld.Agent](t)(e.svc.CreateAgent(ctx, e.member, service.AgentParams{Name: "a", Config: skilld.AgentConfig{Model: "test:m"}}))
		del := func(a service.Actor, id string) error {
			return e.svc.DeleteTask(ctx, a, service.DeleteTaskParams{TaskRef: service.TaskRef{ID: id}})
		}
		done, out := e.ranTask(t, e.member, ag.ID, skilld.TaskCompleted, strings.Repeat("long output ", 1000))
		shared, sharedOut := e.ranTask(t, e.member, ag.ID, skilld.TaskFailed, "the same output twice")
		_, sameOut := e.ranTask(t, e.admin, ag.ID, skilld.TaskCompleted, "the same output twice")
		if sameOut != sharedOut {
			t.Fatal("equal outputs are not one blob")
		}

		// Viewers, and members who did not start it, may not.
		tok := must[*service.NewToken](t)(e.svc.CreateToken(ctx, e.admin, service.CreateTokenParams{Name: "another member", Role: skilld.RoleMember}))
		otherMember := must[service.Actor](t)(e.svc.Authenticate(ctx, tok.Secret))
		wantCode(t, del(e.viewer, done.ID), skilld.EFORBIDDEN)
		wantCode(t, del(otherMember, done.ID), skilld.EFORBIDDEN)
		wantCode(t, del(e.other, done.ID), skilld.ENOTFOUND)
		wantCode(t, del(e.member, "no-such-task"), skilld.ENOTFOUND)

		if err := del(e.member, done.ID); err != nil {
			t.Fatal(err)
		}
		_, err := e.svc.GetTask(ctx, e.member, service.GetTaskParams{TaskRef: service.TaskRef{ID: done.ID}})
		wantCode(t, err, skilld.ENOTFOUND)
		_, err = e.svc.TaskEvents(ctx, e.member, service.TaskEventsParams{TaskRef: service.TaskRef{ID: done.ID}})
		wantCode(t, err, skilld.ENOTFOUND)
		if entries := must[[]*skilld.TaskLogEntry](t)(e.db.TaskLogList(ctx, &store.TaskLogListParams{TaskID: done.ID})); len(entries) != 0 {
			t.Errorf("the deleted task's log has %d entries", len(entries))
		}
		if !blobGone(t, e.blobs, out) {
			t.Error("the deleted task's output blob is still stored")
		}
		wantCode(t, del(e.member, done.ID), skilld.ENOTFOUND)

		// An admin deletes any member's task; a blob another task still
		// uses stays.
		if err := del(e.admin, shared.ID); err != nil {
			t.Fatal(err)
		}
		if blobGone(t, e.blobs, sharedOut) {
			t.Error("an output blob another task uses was deleted")
		}
		e.fsckClean(t)

		// A task still going is refused, untouched, until cancelled.
		for _, st := range []skilld.TaskStatus{skilld.TaskQueued, skilld.TaskRunning, skilld.TaskWaitingForApproval} {
			going, goingOut := e.ranTask(t, e.member, ag.ID, st, "output of a "+string(st)+" task")
			err := del(e.member, going.ID)
			if wantCode(t, err, skilld.ECONFLICT); !strings.Contains(err.Error(), "cancel it first") {
				t.Errorf("refusal of a %s task: %v", st, err)
			}
			if got := must[*skilld.Task](t)(e.svc.GetTask(ctx, e.member, service.GetTaskParams{TaskRef: service.TaskRef{ID: going.ID}})); got.Status != st || blobGone(t, e.blobs, goingOut) {
				t.Errorf("a refused delete changed the %s task: %+v", st, got)
			}
			must[*skilld.Task](t)(e.svc.CancelTask(ctx, e.member, service.CancelTaskParams{TaskRef: service.TaskRef{ID: going.ID}}))
			if err := del(e.member, going.ID); err != nil {
				t.Errorf("deleting the cancelled task: %v", err)
			}
		}
		e.fsckClean(t)
	})
}

// TestDeleteTaskFreesPackages: a task that ended without releasing its
// snapshot's packages (its end was cut short) gives them up when deleted,
// and a package whose skill is gone goes with its blobs.
func TestDeleteTaskFreesPackages(t *testing.T) {
	e := newEnv(t, storetest.Drivers(t)[0].Open, service.Config{}, nil)
	ctx := t.Context()
	sk := must[*service.SkillView](t)(e.svc.CreateSkill(ctx, e.member, service.CreateSkillParams{Files: map[string]string{
		"SKILL.md": skillMD("pinned", "A skill a task pins."), "data.txt": "only this skill has this"}}))
	ag := must[*skilld.Agent](t)(e.svc.CreateAgent(ctx, e.member, service.AgentParams{Name: "a", Config: skilld.AgentConfig{Model: "test:m"},
		Skills: []service.AgentSkillRef{{Skill: sk.ID}}}))
	task, _ := e.ranTask(t, e.member, ag.ID, skilld.TaskCompleted, "out")
	must[*skilld.Agent](t)(e.svc.UpdateAgent(ctx, e.member, service.UpdateAgentParams{AgentRef: service.AgentRef{ID: ag.ID}, Skills: &[]service.AgentSkillRef{}}))
	if err := e.svc.DeleteSkill(ctx, e.member, service.DeleteSkillParams{SkillRef: service.SkillRef{ID: sk.ID}}); err != nil {
		t.Fatal(err)
	}
	if n := e.blobCount(t); n != 3 {
		t.Fatalf("%d blobs while the task pins the skill's package, want its 2 files and the output", n)
	}
	if err := e.svc.DeleteTask(ctx, e.member, service.DeleteTaskParams{TaskRef: service.TaskRef{ID: task.ID}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.db.PackageGet(ctx, &store.PackageGetParams{Digest: sk.Digest}); skilld.ErrorCode(err) != skilld.ENOTFOUND {
		t.Errorf("the package the task pinned is still stored: %v", err)
	}
	if n := e.blobCount(t); n != 0 {
		t.Errorf("%d blobs left", n)
	}
	e.fsckClean(t)
}
