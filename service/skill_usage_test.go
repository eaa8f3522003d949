package service_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/analytics"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/storetest"
)

type quarterTokens struct{}

func (quarterTokens) Count(s string) int { return (len([]rune(s)) + 3) / 4 }

// runTask starts a task of agentID and runs it as the executor would, on
// the task's snapshot, with a scripted model; its log is written to the
// store and the task ends as its log says. With resumeAt > 0 the run is
// stopped after that many entries and resumed: the stored log is the
// resumed one. It returns the task and its log.
func (e *env) runTask(t *testing.T, agentID, input string, resumeAt int, steps ...model.Step) (*skilld.Task, []agent.LogEntry) {
	t.Helper()
	ctx := t.Context()
	task := must[*skilld.Task](t)(e.svc.StartTask(ctx, e.member, service.StartTaskParams{AgentRef: service.AgentRef{ID: agentID}, Input: input}))
	snap := must[*service.Snapshot](t)(service.TaskSnapshot(task))
	var skills []agent.Skill
	for _, s := range snap.Skills {
		skills = append(skills, agent.Skill{ID: s.ID, Name: s.Name, Description: s.Description, Digest: s.Digest, Files: s.Files,
			Withheld: s.Withheld, NoModelInvocation: s.NoModelInvocation, NoUserInvocation: s.NoUserInvocation})
	}
	drain := func(at agent.Task) []agent.LogEntry {
		log := agent.NewMemoryLog(at.Resume)
		a := must[*agent.Agent](t)(agent.New(agent.Config{Model: model.NewScripted(steps...), Window: 100000, Tokenizer: quarterTokens{},
			Skills: skills, Packages: e.svc.Packages(), Log: log}))
		for _, err := range a.Run(ctx, at) {
			if err != nil {
				t.Fatal(err)
			}
		}
		return log.Entries()
	}
	at := agent.Task{ID: task.ID, Input: input}
	log := drain(at)
	if resumeAt > 0 {
		at.Resume = log[:resumeAt]
		log = drain(at)
	}
	status := skilld.TaskCompleted
	for _, l := range log {
		must[*skilld.TaskLogEntry](t)(e.db.TaskLogAppend(ctx, &store.TaskLogAppendParams{TaskID: task.ID, Kind: l.Kind, Payload: l.Payload}))
		if ev, err := agent.EventOf(task.ID, l.Seq, l.Time, l.Kind, l.Payload); err == nil && ev.Type == agent.EventTaskFailed {
			status = skilld.TaskFailed
		}
	}
	at2 := time.Now().UTC()
	return must[*skilld.Task](t)(e.db.TaskUpdate(ctx, &store.TaskUpdateParams{ID: task.ID, Status: status, FinishedAt: &at2})), log
}

func activateStep(name string) model.Step {
	return model.Reply("", model.Call(agent.ActivateSkill, map[string]string{"skill_name": name}))
}

// stats asks for the workspace's skill stats, by skill name.
func (e *env) stats(t *testing.T, a service.Actor, p service.SkillStatsParams) map[string]analytics.SkillStats {
	t.Helper()
	res := must[*service.SkillStatsList](t)(e.svc.SkillStats(t.Context(), a, p))
	out := map[string]analytics.SkillStats{}
	for _, it := range res.Items {
		out[it.Name] = it
	}
	if len(out) != len(res.Items) {
		t.Fatalf("a skill is listed twice: %+v", res.Items)
	}
	return out
}

// TestSkillStats runs tasks of two agents as the runtime does — one
// completed, one failed after a resume, one by the user's "/name", one
// cancelled, one still running — and checks the workspace's stats against
// their logs: every skill listed with zeros, offers, activations by
// version, outcomes; the agent, from and to filters; a task indexed once
// (the metrics hook hears of it once), indexed again when its log moves,
// and its counts gone with it when deleted.
func TestSkillStats(t *testing.T) {
	forDrivers(t, func(t *testing.T, open storetest.Opener) {
		var mu sync.Mutex
		indexed := map[string]int{}
		e := newEnv(t, open, service.Config{UsageIndexed: func(outcome string, rows []store.SkillUsage) {
			mu.Lock()
			defer mu.Unlock()
			indexed[outcome]++
		}}, nil)
		ctx := t.Context()
		for _, sk := range []struct{ name, extra string }{{"alpha", ""}, {"quiet", ""}, {"userside", "disable-model-invocation: true\n"}, {"unattached", ""}} {
			md := fmt.Sprintf("---\nname: %s\ndescription: Use %s when asked.\n%s---\nDo the %s thing.\n", sk.name, sk.name, sk.extra, sk.name)
			must[*service.SkillView](t)(e.svc.CreateSkill(ctx, e.member, service.CreateSkillParams{Files: map[string]string{"SKILL.md": md}}))
		}
		cfg := skilld.AgentConfig{Model: "test:m"}
		main := must[*skilld.Agent](t)(e.svc.CreateAgent(ctx, e.member, service.AgentParams{Name: "main", Config: cfg,
			Skills: []service.AgentSkillRef{{Skill: "alpha"}, {Skill: "quiet"}, {Skill: "userside"}}}))
		side := must[*skilld.Agent](t)(e.svc.CreateAgent(ctx, e.member, service.AgentParams{Name: "side", Config: cfg, Skills: []service.AgentSkillRef{{Skill: "quiet"}}}))

		// Before any task: every skill, all zeros.
		for name, st := range e.stats(t, e.viewer, service.SkillStatsParams{}) {
			if st.Tasks != 0 || st.Activations != 0 || st.OfferedNeverActivated || len(st.Versions) != 0 {
				t.Errorf("%s before any task: %+v", name, st)
			}
		}

		// 1: alpha at the first call; the user's /userside before it.
		first, _ := e.runTask(t, main.ID, "/userside go", 0, activateStep("alpha"), model.Reply("done"))
		// alpha gets a new version: the next tasks run it.
		must[*service.SkillView](t)(e.svc.ReplaceSkillFiles(ctx, e.member, service.ReplaceSkillFilesParams{SkillRef: service.SkillRef{ID: "alpha"},
			Files: map[string]string{"SKILL.md": "---\nname: alpha\ndescription: Use alpha when asked, now better.\n---\nDo it.\n"}}))
		// 2: alpha at the second call, then the model fails; stopped
		// after its fourth entry and resumed.
		failing := model.Step{Func: func(*model.Request) (*model.Response, error) {
			return nil, skilld.Errorf(skilld.EINVALID, "the model refused")
		}}
		second, log := e.runTask(t, main.ID, "go on", 4, activateStep("nothing-here"), activateStep("alpha"), failing)
		if !slices.ContainsFunc(log, func(l agent.LogEntry) bool {
			ev, err := agent.EventOf("", l.Seq, l.Time, l.Kind, l.Payload)
			return err == nil && ev.Type == agent.EventTaskResumed
		}) || second.Status != skilld.TaskFailed {
			t.Fatalf("the second task was not resumed, or did not fail: %s", second.Status)
		}
		// 3: the side agent's task, cancelled.
		third, _ := e.runTask(t, side.ID, "side", 0, model.Reply("ok"))
		cancelled := time.Now().UTC()
		must[*skilld.Task](t)(e.db.TaskUpdate(ctx, &store.TaskUpdateParams{ID: third.ID, Status: skilld.TaskCancelled, FinishedAt: &cancelled}))
		// 4: still running: not counted.
		running := must[*skilld.Task](t)(e.svc.StartTask(ctx, e.member, service.StartTaskParams{AgentRef: service.AgentRef{ID: main.ID}, Input: "x"}))
		must[*skilld.TaskLogEntry](t)(e.db.TaskLogAppend(ctx, &store.TaskLogAppendParams{TaskID: running.ID, Kind: "event", Payload: []byte(`{"type":"task.started"}`)}))
		must[*skilld.Task](t)(e.db.TaskUpdate(ctx, &store.TaskUpdateParams{ID: running.ID, Status: skilld.TaskRunning}))

		got := e.stats(t, e.viewer, service.SkillStatsParams{})
		if len(got) != 4 {
			t.Fatalf("%d skills listed, want the workspace's 4", len(got))
		}
		alpha := got["alpha"]
		if alpha.Tasks != 2 || alpha.Offered != 2 || alpha.OfferedFull != 2 || alpha.Activations != 2 || alpha.TasksActivated != 2 ||
			alpha.FirstIteration == nil || *alpha.FirstIteration != 1.5 || alpha.Outcomes != (analytics.Outcomes{Completed: 1, Failed: 1}) || alpha.OfferedNeverActivated {
			t.Errorf("alpha: %+v", alpha)
		}
		if v := alpha.Versions; len(v) != 2 || v[0].Version != 2 || v[0].Activations != 1 || *v[0].FirstIteration != 2 || v[1].Version != 1 || *v[1].FirstIteration != 1 {
			t.Errorf("alpha's versions: %+v", v)
		}
		if q := got["quiet"]; q.Tasks != 3 || q.Offered != 3 || q.Activations != 0 || !q.OfferedNeverActivated || q.FirstIteration != nil {
			t.Errorf("quiet: %+v", q)
		}
		if u := got["userside"]; u.Tasks != 2 || u.Hidden != 2 || u.Offered != 0 || u.Activations != 1 || *u.FirstIteration != 0 || u.OfferedNeverActivated {
			t.Errorf("userside: %+v", u)
		}
		if u := got["unattached"]; u.Tasks != 0 || u.Offered != 0 {
			t.Errorf("unattached: %+v", u)
		}
		if indexed[analytics.OutcomeCompleted] != 1 || indexed[analytics.OutcomeFailed] != 1 || indexed[analytics.OutcomeCancelled] != 1 {
			t.Errorf("the indexer reported %v", indexed)
		}

		// The side agent: only its skill, only its task.
		bySide := e.stats(t, e.viewer, service.SkillStatsParams{Agent: "side"})
		if q, ok := bySide["quiet"]; len(bySide) != 1 || !ok || q.Tasks != 1 {
			t.Errorf("the side agent's stats: %+v", bySide)
		}
		if one := e.stats(t, e.viewer, service.SkillStatsParams{Skill: "alpha"}); len(one) != 1 || one["alpha"].Activations != 2 {
			t.Errorf("alpha alone: %+v", one)
		}
		if none := e.stats(t, e.viewer, service.SkillStatsParams{Skill: "alpha", Agent: "side"}); len(none) != 0 {
			t.Errorf("alpha of an agent it is not attached to: %+v", none)
		}
		future := time.Now().Add(time.Hour).UTC()
		if a := e.stats(t, e.viewer, service.SkillStatsParams{From: future})["alpha"]; a.Tasks != 0 {
			t.Errorf("tasks from the future: %+v", a)
		}
		if a := e.stats(t, e.viewer, service.SkillStatsParams{To: future})["alpha"]; a.Tasks != 2 {
			t.Errorf("tasks until the future: %+v", a)
		}
		_, err := e.svc.SkillStats(ctx, e.viewer, service.SkillStatsParams{From: future, To: future})
		var se *skilld.Error
		if wantCode(t, err, skilld.EINVALID); !errors.As(err, &se) || len(se.Details) != 1 || se.Details[0].Field != "to" {
			t.Errorf("an empty range: %v does not name to", err)
		}
		_, err = e.svc.SkillStats(ctx, e.other, service.SkillStatsParams{Agent: "main"})
		wantCode(t, err, skilld.ENOTFOUND)

		// Asking again indexes nothing again.
		e.stats(t, e.viewer, service.SkillStatsParams{})
		if n := indexed[analytics.OutcomeCompleted] + indexed[analytics.OutcomeFailed] + indexed[analytics.OutcomeCancelled]; n != 3 {
			t.Errorf("%d tasks indexed after a second query, want 3", n)
		}

		// A task whose log moves (it ran again) is indexed again: its
		// rows are replaced, not added to.
		act, err := agent.Event{Payload: agent.SkillActivated{Skill: "quiet"}}.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		must[*skilld.TaskLogEntry](t)(e.db.TaskLogAppend(ctx, &store.TaskLogAppendParams{TaskID: third.ID, Kind: agent.KindEvent, Payload: act}))
		if q := e.stats(t, e.viewer, service.SkillStatsParams{})["quiet"]; q.Tasks != 3 || q.Activations != 1 || q.Outcomes.Cancelled != 1 || q.OfferedNeverActivated {
			t.Errorf("quiet after its task ran again: %+v", q)
		}

		// Deleting a task takes its counts.
		if err := e.svc.DeleteTask(ctx, e.member, service.DeleteTaskParams{TaskRef: service.TaskRef{ID: first.ID}}); err != nil {
			t.Fatal(err)
		}
		if a := e.stats(t, e.viewer, service.SkillStatsParams{})["alpha"]; a.Tasks != 1 || a.Activations != 1 || a.Outcomes.Completed != 0 || len(a.Versions) != 1 {
			t.Errorf("alpha after its first task was deleted: %+v", a)
		}
	})
}

// TestIndexSkillUsageSweeps: the sweeper indexes every workspace's
// finished tasks in bounded passes, and stops with its context.
func TestIndexSkillUsageSweeps(t *testing.T) {
	e := newEnv(t, storetest.Drivers(t)[0].Open, service.Config{}, nil)
	ctx := t.Context()
	md := "---\nname: one\ndescription: Use one.\n---\nDo it.\n"
	must[*service.SkillView](t)(e.svc.CreateSkill(ctx, e.member, service.CreateSkillParams{Files: map[string]string{"SKILL.md": md}}))
	ag := must[*skilld.Agent](t)(e.svc.CreateAgent(ctx, e.member, service.AgentParams{Name: "a", Config: skilld.AgentConfig{Model: "test:m"},
		Skills: []service.AgentSkillRef{{Skill: "one"}}}))
	for range 3 {
		e.runTask(t, ag.ID, "go", 0, activateStep("one"), model.Reply("done"))
	}
	// A task whose snapshot cannot be read is reported once, and not
	// read again (it would hold back the tasks after it).
	bad := must[*skilld.Task](t)(e.db.TaskCreate(ctx, &store.TaskCreateParams{WorkspaceID: e.member.WorkspaceID, AgentID: ag.ID, Input: "x",
		Config: []byte(`{"skills": 5}`)}))
	must[*skilld.TaskLogEntry](t)(e.db.TaskLogAppend(ctx, &store.TaskLogAppendParams{TaskID: bad.ID, Kind: "event", Payload: []byte(`{"type":"task.started"}`)}))
	fin := time.Now().UTC()
	must[*skilld.Task](t)(e.db.TaskUpdate(ctx, &store.TaskUpdateParams{ID: bad.ID, Status: skilld.TaskFailed, FinishedAt: &fin}))
	if n, err := e.svc.IndexSkillUsage(ctx, e.member.WorkspaceID, 10); n != 3 || skilld.ErrorCode(err) != skilld.EINTEGRITY || !strings.Contains(err.Error(), bad.ID) {
		t.Fatalf("a pass over a bad snapshot indexed %d (%v)", n, err)
	}
	if n, err := e.svc.IndexSkillUsage(ctx, "", 10); n != 0 || err != nil {
		t.Fatalf("a second pass indexed %d (%v)", n, err)
	}
	// Three more, indexed two at a time.
	for range 3 {
		e.runTask(t, ag.ID, "go", 0, activateStep("one"), model.Reply("done"))
	}
	if n, err := e.svc.IndexSkillUsage(ctx, "", 2); n != 2 || err != nil {
		t.Fatalf("a pass of 2 indexed %d (%v)", n, err)
	}
	sweepCtx, stop := context.WithCancel(ctx)
	passes := make(chan int, 10)
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.svc.SweepSkillUsage(sweepCtx, service.UsageSweep{Interval: time.Hour, Batch: 2, Report: func(n int, err error) {
			if err != nil {
				t.Error(err)
			}
			passes <- n
		}})
	}()
	if n := <-passes; n != 1 {
		t.Errorf("the sweeper's first pass indexed %d, want the 1 left", n)
	}
	stop()
	<-done
	if one := e.stats(t, e.viewer, service.SkillStatsParams{})["one"]; one.Tasks != 6 || one.Activations != 6 {
		t.Errorf("one: %+v", one)
	}
}

// TestSnapshotRanks: an agent with more skills than every common window
// names has them ranked in its tasks' snapshots — a pinned skill first,
// then by the activations of the agent's recent tasks — and one with few
// skills is not ranked at all.
func TestSnapshotRanks(t *testing.T) {
	forDrivers(t, func(t *testing.T, open storetest.Opener) {
		e := newEnv(t, open, service.Config{}, nil)
		ctx := t.Context()
		var refs []service.AgentSkillRef
		for i := range 60 {
			name := fmt.Sprintf("tool-%02d", i)
			md := fmt.Sprintf("---\nname: %s\ndescription: Use %s when asked.\n---\nDo it.\n", name, name)
			must[*service.SkillView](t)(e.svc.CreateSkill(ctx, e.member, service.CreateSkillParams{Files: map[string]string{"SKILL.md": md}}))
			ref := service.AgentSkillRef{Skill: name}
			if i == 7 {
				ref.Version = 1
			}
			refs = append(refs, ref)
		}
		cfg := skilld.AgentConfig{Model: "test:m"}
		big := must[*skilld.Agent](t)(e.svc.CreateAgent(ctx, e.member, service.AgentParams{Name: "big", Config: cfg, Skills: refs}))
		small := must[*skilld.Agent](t)(e.svc.CreateAgent(ctx, e.member, service.AgentParams{Name: "small", Config: cfg, Skills: refs[:3]}))
		e.runTask(t, big.ID, "go", 0, activateStep("tool-42"), model.Reply("done"))
		e.runTask(t, big.ID, "go", 0, activateStep("tool-42"), model.Reply("done"))
		e.runTask(t, big.ID, "go", 0, activateStep("tool-13"), model.Reply("done"))
		e.runTask(t, small.ID, "go", 0, activateStep("tool-01"), model.Reply("done"))
		must[*service.SkillStatsList](t)(e.svc.SkillStats(ctx, e.viewer, service.SkillStatsParams{})) // indexes the tasks

		ranks := func(ag *skilld.Agent) map[string]int {
			snap := must[*service.Snapshot](t)(e.svc.Resolve(ctx, e.member.WorkspaceID, ag))
			out := map[string]int{}
			for _, s := range snap.Skills {
				if s.Rank != 0 {
					out[s.Name] = s.Rank
				}
			}
			return out
		}
		if got := ranks(big); len(got) != 3 || got["tool-42"] != 2 || got["tool-13"] != 1 || got["tool-07"] < got["tool-42"] {
			t.Errorf("ranks of the big agent = %v, want tool-07 pinned first, then tool-42 (2), tool-13 (1)", got)
		}
		if got := ranks(small); len(got) != 0 {
			t.Errorf("ranks of the small agent = %v, want none", got)
		}
	})
}
