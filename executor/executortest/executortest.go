// Package executortest is the conformance suite for task executors: what
// every executor (executor.Local, the Temporal executor) does with a task
// — run it to its end, cancel it, wait for approvals, bound its time —
// and what it keeps across a crash: a task resumes from its last logged
// step, a completed model call is never made again, a tool call is never
// run twice, and the task's sandbox files are still there.
package executortest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/service"
)

// Env is one executor under test, over real stores, with the suite's
// model behind every "test:…" model reference.
type Env struct {
	Service *service.Service
	// Actor is an admin of the workspace the suite works in.
	Actor service.Actor
	// Restart stops the executor as a crash would — tasks stop where they
	// are and nothing is recorded of their end — and starts a new one
	// over the same storage and sandboxes, which picks them up.
	Restart func(t *testing.T)
	// Queue is set when the executor keeps tasks waiting for a place and
	// reports their position.
	Queue bool
	// Workspace is the host folder of a task's sandbox workspace.
	Workspace func(taskID string) string
}

// Options are what the suite asks of the executor it gets.
type Options struct {
	// MaxRunning bounds the tasks running at once (0: the default).
	MaxRunning int
	// TaskTimeout is the executor's task timeout (0: the default).
	TaskTimeout time.Duration
}

// Factory makes an Env whose executor answers model references with m.
type Factory func(t *testing.T, m *Model, o Options) *Env

// Run runs the suite.
func Run(t *testing.T, f Factory) {
	for _, c := range []struct {
		name string
		fn   func(*testing.T, Factory)
	}{
		{"Completes", completes},
		{"ServerTimeoutBoundsAgents", serverTimeoutBoundsAgents},
		{"Cancel", cancel},
		{"Approval", approval},
		{"Timeout", timeout},
		{"RestartDuringModelCall", restartDuringModelCall},
		{"RestartDuringToolCall", restartDuringToolCall},
		{"RestartWaitingForApproval", restartWaitingForApproval},
		{"RestartQueued", restartQueued},
		{"QueueInOrder", queueInOrder},
		{"QueuedCap", queuedCap},
	} {
		t.Run(c.name, func(t *testing.T) { c.fn(t, f) })
	}
}

// skillMD is the suite's skill: a script that counts its runs.
const skillMD = `---
name: counter
description: Counts runs of its script. Use it to test executors.
---
Run scripts/count.sh to count.
`

// agentWith stores the counter skill and an agent using it.
func agentWith(t testing.TB, e *Env, name string, cfg skilld.AgentConfig) *skilld.Agent {
	t.Helper()
	ctx := t.Context()
	if _, err := e.Service.GetSkill(ctx, e.Actor, service.GetSkillParams{SkillRef: service.SkillRef{ID: "counter"}}); err != nil {
		if _, err := e.Service.CreateSkill(ctx, e.Actor, service.CreateSkillParams{Files: map[string]string{
			"SKILL.md": skillMD, "scripts/count.sh": "#!/bin/sh\necho run >> count.txt\nwc -l < count.txt\n"}}); err != nil {
			t.Fatal(err)
		}
	}
	cfg.Model = "test:m"
	if cfg.Context.Window == 0 {
		cfg.Context.Window = 32000
	}
	ag, err := e.Service.CreateAgent(ctx, e.Actor, service.AgentParams{Name: name, Config: cfg, Skills: []service.AgentSkillRef{{Skill: "counter"}}})
	if err != nil {
		t.Fatal(err)
	}
	return ag
}

func start(t testing.TB, e *Env, ag *skilld.Agent, input string) *skilld.Task {
	t.Helper()
	task, err := e.Service.RunTask(t.Context(), e.Actor, service.StartTaskParams{AgentRef: service.AgentRef{ID: ag.ID}, Input: input})
	if err != nil {
		t.Fatal(err)
	}
	return task
}

// waitFor polls a task until cond holds; a deadline far beyond any run
// the suite makes only keeps a broken executor from hanging the test.
func waitFor(t *testing.T, e *Env, id, what string, cond func(*skilld.Task) bool) *skilld.Task {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		task, err := e.Service.GetTask(t.Context(), e.Actor, service.GetTaskParams{TaskRef: service.TaskRef{ID: id}})
		if err == nil && cond(task) {
			return task
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s never got %s: %+v (%v)", id, what, task, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func waitStatus(t *testing.T, e *Env, id string, st skilld.TaskStatus) *skilld.Task {
	t.Helper()
	return waitFor(t, e, id, string(st), func(task *skilld.Task) bool { return task.Status == st })
}

// events reads a task's whole log as events.
func events(t *testing.T, e *Env, id string) []agent.Event {
	t.Helper()
	var out []agent.Event
	for after := int64(0); ; {
		page, err := e.Service.TaskEvents(t.Context(), e.Actor, service.TaskEventsParams{TaskRef: service.TaskRef{ID: id}, After: after})
		if err != nil {
			t.Fatal(err)
		}
		for _, le := range page {
			ev, err := agent.EventOf(id, le.Seq, le.CreatedAt, le.Kind, le.Payload)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, ev)
		}
		if len(page) == 0 {
			return out
		}
		after = page[len(page)-1].Seq
	}
}

// checkLog asserts what every task's log keeps: sequence numbers without
// gaps, each model call answered once, each tool call with one result.
func checkLog(t *testing.T, e *Env, id string) []agent.Event {
	t.Helper()
	evs := events(t, e, id)
	results := map[string]int{}
	answers := 0
	for i, ev := range evs {
		if ev.Seq != int64(i+1) {
			t.Errorf("entry %d has seq %d: a gap or a duplicate", i+1, ev.Seq)
		}
		switch p := ev.Payload.(type) {
		case agent.ToolResult:
			results[p.CallID]++
		case agent.LLMCallCompleted:
			answers++
		}
	}
	for call, n := range results {
		if n != 1 {
			t.Errorf("call %s has %d results", call, n)
		}
	}
	if started := len(ofType(evs, agent.EventLLMCallStarted)); answers > started {
		t.Errorf("%d answers for %d model calls", answers, started)
	}
	return evs
}

func ofType(evs []agent.Event, typ string) []agent.Event {
	var out []agent.Event
	for _, ev := range evs {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

// lastToolResult is the last tool message a request holds.
func lastToolResult(req *model.Request) model.Message {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == model.RoleTool {
			return req.Messages[i]
		}
	}
	return model.Message{}
}

// expect is a turn that checks the last tool result before answering.
func expect(t *testing.T, contains string, then Turn) Turn {
	return func(ctx context.Context, req *model.Request) (*model.Response, error) {
		if got := lastToolResult(req); !strings.Contains(got.Content, contains) {
			t.Errorf("the model read %q, want it to contain %q", got.Content, contains)
		}
		return then(ctx, req)
	}
}

func completes(t *testing.T, f Factory) {
	m := NewModel()
	e := f(t, m, Options{})
	ag := agentWith(t, e, "worker", skilld.AgentConfig{})
	const input = "count once, write a note"
	m.Script(input,
		Costing(Call(agent.ActivateSkill, map[string]string{"skill_name": "counter"}), 100, 10),
		expect(t, "scripts/count.sh", Costing(Call(agent.ToolShell, map[string]string{"command": "sh skills/counter-*/scripts/count.sh"}), 200, 20)),
		expect(t, "1", Call(agent.ToolWriteFile, map[string]string{"path": "note.md", "content": "counted"})),
		Call(agent.ToolReadFile, map[string]string{"path": "note.md"}),
		expect(t, "counted", Costing(Answer("done: counted once"), 400, 40)))
	task := start(t, e, ag, input)
	if task.CreatedAt.IsZero() {
		t.Errorf("started task %+v", task)
	}
	done := waitStatus(t, e, task.ID, skilld.TaskCompleted)
	evs := checkLog(t, e, task.ID)
	if done.Error != nil || len(ofType(evs, agent.EventSkillActivated)) != 1 || len(ofType(evs, agent.EventToolResult)) != 4 {
		t.Errorf("task %+v, events %d", done, len(evs))
	}
	if calls := m.Calls(input); fmt.Sprint(calls) != "[1 1 1 1 1]" {
		t.Errorf("model calls per turn %v, want each once", calls)
	}
	checkResult(t, e, done, "done: counted once", skilld.TaskUsage{PromptTokens: 700, CompletionTokens: 70, TotalTokens: 770})
}

// checkResult asserts what a completed task's row says of its end, in
// tasks.get and tasks.list alike: the output of its task.completed event,
// the usage of all its model calls, and its times in order — finished
// when the log says it completed.
func checkResult(t *testing.T, e *Env, done *skilld.Task, output string, usage skilld.TaskUsage) {
	t.Helper()
	if done.Output != output || done.Usage != usage || done.Error != nil {
		t.Errorf("completed task: output %q, usage %+v, error %+v; want %q and %+v", done.Output, done.Usage, done.Error, output, usage)
	}
	if done.StartedAt == nil || done.FinishedAt == nil || done.StartedAt.Before(done.CreatedAt) || done.FinishedAt.Before(*done.StartedAt) {
		t.Errorf("times: created %v, started %v, finished %v", done.CreatedAt, done.StartedAt, done.FinishedAt)
	}
	if evs := ofType(events(t, e, done.ID), agent.EventTaskCompleted); len(evs) != 1 || !evs[0].Time.Equal(*done.FinishedAt) {
		t.Errorf("finished at %v, the log completed it at %v", done.FinishedAt, evs)
	}
	page, err := e.Service.ListTasks(t.Context(), e.Actor, service.ListTasksParams{Agent: done.AgentID})
	if err != nil {
		t.Fatal(err)
	}
	for _, listed := range page.Items {
		if listed.ID == done.ID && (listed.Output != output || listed.Usage != usage || listed.FinishedAt == nil || !listed.FinishedAt.Equal(*done.FinishedAt)) {
			t.Errorf("listed %+v", listed)
		}
	}
}

func cancel(t *testing.T, f Factory) {
	m := NewModel()
	e := f(t, m, Options{})
	ag := agentWith(t, e, "slow", skilld.AgentConfig{})
	entered, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	m.Script("wait forever", Block(entered, release, Answer("too late")))
	task := start(t, e, ag, "wait forever")
	<-entered
	if _, err := e.Service.CancelTask(t.Context(), e.Actor, service.CancelTaskParams{TaskRef: service.TaskRef{ID: task.ID}}); err != nil {
		t.Fatal(err)
	}
	done := waitStatus(t, e, task.ID, skilld.TaskCancelled)
	if done.Error == nil || done.Error.Code != skilld.TaskCancelledCode || done.Output != "" || done.FinishedAt == nil {
		t.Errorf("cancelled task %+v (error %+v)", done, done.Error)
	}
}

func approval(t *testing.T, f Factory) {
	m := NewModel()
	e := f(t, m, Options{})
	ag := agentWith(t, e, "careful", skilld.AgentConfig{Tools: skilld.ToolPolicy{RequireApproval: []string{agent.ToolShell}}})
	m.Script("ask first", Call(agent.ToolShell, map[string]string{"command": "echo approved-run"}),
		expect(t, "approved-run", Answer("ran")))
	task := start(t, e, ag, "ask first")
	waitStatus(t, e, task.ID, skilld.TaskWaitingForApproval)
	decide(t, e, task.ID, true)
	waitStatus(t, e, task.ID, skilld.TaskCompleted)
	checkLog(t, e, task.ID)
}

// decide approves the one call a task waits for.
func decide(t *testing.T, e *Env, id string, approved bool) {
	t.Helper()
	var callID string
	for _, ev := range ofType(events(t, e, id), agent.EventApprovalRequested) {
		callID = ev.Payload.(agent.ApprovalRequested).CallID
	}
	if _, err := e.Service.DecideApproval(t.Context(), e.Actor, service.DecideApprovalParams{TaskRef: service.TaskRef{ID: id}, CallID: callID, Approved: approved}); err != nil {
		t.Fatal(err)
	}
}

func timeout(t *testing.T, f Factory) {
	m := NewModel()
	e := f(t, m, Options{})
	ag := agentWith(t, e, "hasty", skilld.AgentConfig{Timeout: "1s"})
	entered, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	m.Script("take too long", Block(entered, release, Answer("late")))
	task := start(t, e, ag, "take too long")
	failed := waitStatus(t, e, task.ID, skilld.TaskFailed)
	if failed.Error == nil || failed.Error.Code != skilld.ETOOLARGE || !strings.Contains(failed.Error.Message, "ran out of time") || failed.FinishedAt == nil {
		t.Errorf("timed out task %+v (error %+v)", failed, failed.Error)
	}
}

// serverTimeoutBoundsAgents: an agent's config.timeout is no way past the
// executor's task timeout, which is the operator's.
func serverTimeoutBoundsAgents(t *testing.T, f Factory) {
	m := NewModel()
	e := f(t, m, Options{TaskTimeout: 2 * time.Second})
	ag := agentWith(t, e, "greedy", skilld.AgentConfig{Timeout: "1h"})
	entered, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	m.Script("take all day", Block(entered, release, Answer("late")))
	task := start(t, e, ag, "take all day")
	failed := waitStatus(t, e, task.ID, skilld.TaskFailed)
	if failed.Error == nil || failed.Error.Code != skilld.ETOOLARGE || !strings.Contains(failed.Error.Message, "ran out of time") || failed.FinishedAt == nil || failed.StartedAt == nil {
		t.Fatalf("task of an agent asking for 1h on a 2s server: %+v (error %+v)", failed, failed.Error)
	}
	// Stopped at the server's 2s, with slack for a loaded machine, not
	// the agent's hour.
	if took := failed.FinishedAt.Sub(*failed.StartedAt); took < 2*time.Second || took > 30*time.Second {
		t.Errorf("the task ran %v, want about 2s", took)
	}
}

func restartDuringModelCall(t *testing.T, f Factory) {
	m := NewModel()
	e := f(t, m, Options{})
	ag := agentWith(t, e, "resumer", skilld.AgentConfig{})
	entered, release := make(chan struct{}), make(chan struct{})
	const input = "survive a restart mid-call"
	m.Script(input,
		Costing(Call(agent.ToolShell, map[string]string{"command": "echo first >> steps.txt"}), 11, 1),
		Block(entered, release, Costing(Call(agent.ToolShell, map[string]string{"command": "echo second >> steps.txt; cat steps.txt"}), 13, 3)),
		expect(t, "first\nsecond", Costing(Answer("both"), 17, 7)))
	task := start(t, e, ag, input)
	<-entered
	before := waitStatus(t, e, task.ID, skilld.TaskRunning)
	restarted := time.Now()
	e.Restart(t)
	close(release)
	done := waitStatus(t, e, task.ID, skilld.TaskCompleted)
	// The call cut off by the restart is counted once, when it answered;
	// the one before it, answered before the restart, once too.
	checkResult(t, e, done, "both", skilld.TaskUsage{PromptTokens: 41, CompletionTokens: 11, TotalTokens: 52})
	if !done.StartedAt.Equal(*before.StartedAt) {
		t.Errorf("the resume moved the start from %v to %v", before.StartedAt, done.StartedAt)
	}
	evs := checkLog(t, e, task.ID)
	// The first call was answered before the restart: never asked again.
	// The second was in flight: asked again, once.
	if calls := m.Calls(input); calls[0] != 1 || calls[1] != 2 || calls[2] != 1 {
		t.Errorf("model calls per turn %v, want [1 2 1]", calls)
	}
	if resumed := ofType(evs, agent.EventTaskResumed); len(resumed) != 1 {
		t.Errorf("%d task.resumed events", len(resumed))
	} else if at := resumed[0].Time; at.Before(restarted.Add(-time.Second)) || at.After(done.FinishedAt.Add(time.Second)) {
		// A second of slack each side for clocks that round.
		t.Errorf("task.resumed at %v, not between the restart (%v) and the end (%v)", at, restarted, done.FinishedAt)
	}
}

func restartDuringToolCall(t *testing.T, f Factory) {
	m := NewModel()
	e := f(t, m, Options{})
	ag := agentWith(t, e, "interrupted", skilld.AgentConfig{})
	const input = "survive a restart mid-command"
	m.Script(input,
		Call(agent.ToolShell, map[string]string{"command": "echo ran >> runs.txt; sleep 60"}),
		expect(t, "interrupted", Call(agent.ToolReadFile, map[string]string{"path": "runs.txt"})),
		expect(t, "ran", Answer("it ran once")))
	task := start(t, e, ag, input)
	// Restart once the command has run its echo and sleeps.
	waitFor(t, e, task.ID, "its command running", func(*skilld.Task) bool {
		_, err := os.Stat(filepath.Join(e.Workspace(task.ID), "runs.txt"))
		return err == nil
	})
	e.Restart(t)
	waitStatus(t, e, task.ID, skilld.TaskCompleted)
	evs := checkLog(t, e, task.ID)
	var runs string
	for _, ev := range ofType(evs, agent.EventMessage) {
		if m := ev.Payload.(agent.Message); m.ToolName == agent.ToolReadFile {
			runs = m.Content
		}
	}
	if strings.Count(runs, "ran") != 1 {
		t.Errorf("runs.txt after the resume: %q; the command must have run once", runs)
	}
}

func restartWaitingForApproval(t *testing.T, f Factory) {
	m := NewModel()
	e := f(t, m, Options{})
	ag := agentWith(t, e, "patient", skilld.AgentConfig{Tools: skilld.ToolPolicy{RequireApproval: []string{agent.ToolShell}}})
	m.Script("wait across a restart", Call(agent.ToolShell, map[string]string{"command": "echo after-restart"}),
		expect(t, "after-restart", Answer("ran")))
	task := start(t, e, ag, "wait across a restart")
	waitStatus(t, e, task.ID, skilld.TaskWaitingForApproval)
	e.Restart(t)
	waitStatus(t, e, task.ID, skilld.TaskWaitingForApproval)
	waitFor(t, e, task.ID, "its approval asked again", func(*skilld.Task) bool {
		// The new executor has the call waiting once it resumed the task.
		_, err := e.Service.DecideApproval(t.Context(), e.Actor, service.DecideApprovalParams{TaskRef: service.TaskRef{ID: task.ID},
			CallID: ofType(events(t, e, task.ID), agent.EventApprovalRequested)[0].Payload.(agent.ApprovalRequested).CallID, Approved: true})
		return err == nil
	})
	waitStatus(t, e, task.ID, skilld.TaskCompleted)
	if n := len(ofType(checkLog(t, e, task.ID), agent.EventApprovalRequested)); n != 1 {
		t.Errorf("approval requested %d times in the log", n)
	}
}

func restartQueued(t *testing.T, f Factory) {
	m := NewModel()
	e := f(t, m, Options{MaxRunning: 1})
	ag := agentWith(t, e, "single", skilld.AgentConfig{})
	entered, release := make(chan struct{}), make(chan struct{})
	m.Script("first in line", Block(entered, release, Answer("one")))
	m.Script("second in line", Answer("two"))
	first := start(t, e, ag, "first in line")
	<-entered
	second := start(t, e, ag, "second in line")
	if e.Queue {
		waitFor(t, e, second.ID, "queue position 1", func(task *skilld.Task) bool { return task.QueuePosition == 1 })
	}
	e.Restart(t)
	close(release)
	waitStatus(t, e, first.ID, skilld.TaskCompleted)
	waitStatus(t, e, second.ID, skilld.TaskCompleted)
}

func queueInOrder(t *testing.T, f Factory) {
	m := NewModel()
	e := f(t, m, Options{MaxRunning: 2})
	if !e.Queue {
		t.Skip("this executor keeps no queue of its own")
	}
	ag := agentWith(t, e, "pooled", skilld.AgentConfig{})
	release := make(chan struct{})
	var tasks []*skilld.Task
	for i := range 5 {
		input := fmt.Sprint("pooled task ", i)
		m.Script(input, Block(make(chan struct{}), release, Answer("ok")))
		tasks = append(tasks, start(t, e, ag, input))
	}
	waitStatus(t, e, tasks[1].ID, skilld.TaskRunning)
	for i, want := range []int{0, 0, 1, 2, 3} {
		st := skilld.TaskRunning
		if want > 0 {
			st = skilld.TaskQueued
		}
		task := waitStatus(t, e, tasks[i].ID, st)
		if task.QueuePosition != want {
			t.Errorf("task %d: position %d, want %d", i, task.QueuePosition, want)
		}
	}
	close(release)
	var started []time.Time
	for _, task := range tasks {
		done := waitStatus(t, e, task.ID, skilld.TaskCompleted)
		started = append(started, *done.StartedAt)
	}
	// Tasks 2 and 3 got the two places together; task 4 only after both.
	if started[4].Before(started[2]) || started[4].Before(started[3]) {
		t.Errorf("the last task started before those queued before it: %v", started)
	}
}

// queuedCap: a workspace with as many tasks waiting to begin as its
// queued cap allows gets the next start refused (ERATELIMITED), with
// nothing recorded, whichever executor waits them: the local one's queue,
// or the tasks no Temporal worker has begun. Once they began, there is
// room again.
func queuedCap(t *testing.T, f Factory) {
	m := NewModel()
	e := f(t, m, Options{MaxRunning: 1})
	two := 2
	if _, err := e.Service.UpdateWorkspace(t.Context(), e.Actor, service.UpdateWorkspaceParams{MaxQueuedTasks: &two}); err != nil {
		t.Fatal(err)
	}
	ag := agentWith(t, e, "capped", skilld.AgentConfig{})
	entered, release := make(chan struct{}), make(chan struct{})
	m.Script("holds the only place", Block(entered, release, Answer("one")))
	m.Script("waits", Answer("two"))
	tasks := []*skilld.Task{start(t, e, ag, "holds the only place")}
	<-entered
	tasks = append(tasks, start(t, e, ag, "waits"), start(t, e, ag, "waits"))
	for _, task := range tasks[1:] {
		if got := waitStatus(t, e, task.ID, skilld.TaskQueued); got.StartedAt != nil {
			t.Fatalf("task %s began with the only place taken", got.ID)
		}
	}
	_, err := e.Service.RunTask(t.Context(), e.Actor, service.StartTaskParams{AgentRef: service.AgentRef{ID: ag.ID}, Input: "waits"})
	if skilld.ErrorCode(err) != skilld.ERATELIMITED || !strings.Contains(skilld.ErrorMessage(err), "max_queued_tasks") {
		t.Errorf("a start past the queued cap: %v", err)
	}
	list, err := e.Service.ListTasks(t.Context(), e.Actor, service.ListTasksParams{Agent: ag.ID})
	if err != nil {
		t.Fatal(err)
	}
	if list.Total != 3 {
		t.Errorf("%d tasks recorded, want the 3 admitted", list.Total)
	}
	close(release)
	for _, task := range tasks {
		waitStatus(t, e, task.ID, skilld.TaskCompleted)
	}
	waitStatus(t, e, start(t, e, ag, "waits").ID, skilld.TaskCompleted)
}
