package executor_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/executor"
	"github.com/skilld/skilld/sandbox"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/storetest"
)

func sqlite(t *testing.T) store.Store { return storetest.OpenSQLite(t) }

// A task's sandbox gets the agent's environment and no more, and is
// removed when the task ends.
func TestTaskSandbox(t *testing.T) {
	f := newFixtureWith(t, sqlite, func(c *executor.Config) { c.KeepSandboxes = false })
	ag, err := f.svc.CreateAgent(t.Context(), f.actor, service.AgentParams{Name: "env", Config: skilld.AgentConfig{Model: "test:m",
		Sandbox: skilld.SandboxSettings{Env: map[string]string{"GREETING": "hello from the agent"}}}})
	if err != nil {
		t.Fatal(err)
	}
	var out string
	f.model.steps = append(f.model.steps,
		call(agent.ToolShell, map[string]string{"command": "echo $GREETING; env | wc -l; touch left-behind"}),
		func(_ context.Context, req *model.Request) (*model.Response, error) {
			out = req.Messages[len(req.Messages)-1].Content
			return answer("done")(nil, req)
		})
	task, err := f.svc.RunTask(t.Context(), f.actor, service.StartTaskParams{AgentRef: service.AgentRef{ID: ag.ID}, Input: "env"})
	if err != nil {
		t.Fatal(err)
	}
	f.wait(t, task.ID, skilld.TaskCompleted)
	if !strings.HasPrefix(out, "hello from the agent\n") {
		t.Errorf("shell output %q", out)
	}
	f.exec.Wait()
	if _, err := os.Stat(filepath.Join(f.sandboxes, task.ID)); !os.IsNotExist(err) {
		t.Errorf("the finished task's sandbox is still there: %v", err)
	}
}

// An agent asking for the network fails at start on a server that does
// not allow it, saying how to allow it.
func TestNetworkNeedsTheOperator(t *testing.T) {
	f := newFixture(t, sqlite)
	ag, err := f.svc.CreateAgent(t.Context(), f.actor, service.AgentParams{Name: "net", Config: skilld.AgentConfig{Model: "test:m",
		Sandbox: skilld.SandboxSettings{Network: skilld.NetworkSettings{Enabled: true}}}})
	if err != nil {
		t.Fatal(err)
	}
	task, err := f.svc.RunTask(t.Context(), f.actor, service.StartTaskParams{AgentRef: service.AgentRef{ID: ag.ID}, Input: "x"})
	if err != nil {
		t.Fatal(err)
	}
	done := f.wait(t, task.ID, skilld.TaskFailed)
	if done.Error == nil || !strings.Contains(done.Error.Message, "network access") || !strings.Contains(done.Error.Message, "--sandbox-network") {
		t.Errorf("error %+v", done.Error)
	}
	if _, err := os.Stat(filepath.Join(f.sandboxes, task.ID)); !os.IsNotExist(err) {
		t.Errorf("a sandbox was made for a refused task: %v", err)
	}
}

// Without a sandbox, a task is refused before it is recorded.
func TestNoSandboxNoTask(t *testing.T) {
	why := skilld.Errorf(skilld.EUNAVAILABLE, "skill scripts cannot run in a sandbox here: bubblewrap (bwrap) is not installed")
	f := newFixtureWith(t, sqlite, func(c *executor.Config) { c.Sandboxes, c.SandboxError = nil, why })
	ag, _ := f.agentWithSkill(t, skilld.ToolPolicy{})
	_, err := f.svc.RunTask(t.Context(), f.actor, service.StartTaskParams{AgentRef: service.AgentRef{ID: ag.ID}, Input: "x"})
	if skilld.ErrorCode(err) != skilld.EUNAVAILABLE || !strings.Contains(err.Error(), "bubblewrap") {
		t.Errorf("RunTask: %v", err)
	}
	tasks, err := f.svc.ListTasks(t.Context(), f.actor, service.ListTasksParams{})
	if err != nil || tasks.Total != 0 {
		t.Errorf("tasks recorded: %+v %v", tasks, err)
	}
}

// read_tool_output reads the task's own outputs only: another task's
// output id, or any blob's digest, opens nothing.
func TestOutputsAreTheTasks(t *testing.T) {
	f := newFixture(t, sqlite)
	ag, err := f.svc.CreateAgent(t.Context(), f.actor, service.AgentParams{Name: "out", Config: skilld.AgentConfig{Model: "test:m"}})
	if err != nil {
		t.Fatal(err)
	}
	var firstID, read string
	f.model.steps = append(f.model.steps,
		call(agent.ToolShell, map[string]string{"command": "yes | head -c 20000"}),
		func(_ context.Context, req *model.Request) (*model.Response, error) {
			c := req.Messages[len(req.Messages)-1].Content
			_, rest, _ := strings.Cut(c, `read_tool_output with id "`)
			firstID, _, _ = strings.Cut(rest, `"`)
			return answer("done")(nil, req)
		},
		func(ctx context.Context, _ *model.Request) (*model.Response, error) {
			return call(agent.ToolReadToolOutput, map[string]string{"id": firstID})(ctx, nil)
		},
		func(_ context.Context, req *model.Request) (*model.Response, error) {
			read = req.Messages[len(req.Messages)-1].Content
			return answer("done")(nil, req)
		})
	for range 2 {
		task, err := f.svc.RunTask(t.Context(), f.actor, service.StartTaskParams{AgentRef: service.AgentRef{ID: ag.ID}, Input: "go"})
		if err != nil {
			t.Fatal(err)
		}
		f.wait(t, task.ID, skilld.TaskCompleted)
	}
	if firstID == "" || !strings.Contains(read, "Error: no stored output") {
		t.Errorf("the second task read the first task's output %q: %.100s", firstID, read)
	}
}

// TestSweepEndedSandboxes: at start, the sandboxes of tasks that ended
// while no server ran (or that no longer exist) are removed, and the
// sandbox of a task that has not ended is kept: the task goes on in it.
func TestSweepEndedSandboxes(t *testing.T) {
	f := newFixtureWith(t, sqlite, func(c *executor.Config) { c.KeepSandboxes = false })
	ag, err := f.svc.CreateAgent(t.Context(), f.actor, service.AgentParams{Name: "sweep", Config: skilld.AgentConfig{Model: "test:m"}})
	if err != nil {
		t.Fatal(err)
	}
	f.model.steps = append(f.model.steps, answer("done"))
	ended, err := f.svc.RunTask(t.Context(), f.actor, service.StartTaskParams{AgentRef: service.AgentRef{ID: ag.ID}, Input: "end"})
	if err != nil {
		t.Fatal(err)
	}
	f.wait(t, ended.ID, skilld.TaskCompleted)
	f.exec.Wait()
	queued, err := f.svc.StartTask(t.Context(), f.actor, service.StartTaskParams{AgentRef: service.AgentRef{ID: ag.ID}, Input: "later"})
	if err != nil {
		t.Fatal(err)
	}
	// What a server that died before removing them leaves.
	for _, id := range []string{ended.ID, "no-such-task", queued.ID} {
		sb, err := f.sbx.Create(t.Context(), sandbox.CreateParams{ID: id})
		if err != nil {
			t.Fatal(err)
		}
		if err := sb.WriteFile(t.Context(), "marker", []byte("from before")); err != nil {
			t.Fatal(err)
		}
	}
	var out string
	f.model.steps = append(f.model.steps, call(agent.ToolShell, map[string]string{"command": "cat marker"}),
		func(_ context.Context, req *model.Request) (*model.Response, error) {
			out = req.Messages[len(req.Messages)-1].Content
			return answer("done")(nil, req)
		})
	if err := f.exec.Recover(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{ended.ID, "no-such-task"} {
		if _, err := os.Stat(filepath.Join(f.sandboxes, id)); !os.IsNotExist(err) {
			t.Errorf("the sandbox of ended task %s is still there: %v", id, err)
		}
	}
	f.wait(t, queued.ID, skilld.TaskCompleted)
	if !strings.HasPrefix(out, "from before") {
		t.Errorf("the task that had not ended lost its sandbox: %q", out)
	}
}

// TestOutputBudget: a task that stores more large tool outputs than
// --task-output-budget allows is stopped and fails too_large, saying so.
func TestOutputBudget(t *testing.T) {
	f := newFixtureWith(t, sqlite, func(c *executor.Config) { c.OutputBudget = 50_000 })
	ag, err := f.svc.CreateAgent(t.Context(), f.actor, service.AgentParams{Name: "noisy", Config: skilld.AgentConfig{Model: "test:m"}})
	if err != nil {
		t.Fatal(err)
	}
	noisy := call(agent.ToolShell, map[string]string{"command": "yes | head -c 20000"})
	f.model.steps = append(f.model.steps, noisy, noisy, noisy, noisy, answer("never"))
	task, err := f.svc.RunTask(t.Context(), f.actor, service.StartTaskParams{AgentRef: service.AgentRef{ID: ag.ID}, Input: "go"})
	if err != nil {
		t.Fatal(err)
	}
	got := f.wait(t, task.ID, skilld.TaskFailed)
	if got.Error == nil || got.Error.Code != skilld.ETOOLARGE || !strings.Contains(got.Error.Message, "--task-output-budget") ||
		!strings.Contains(got.Error.Message, "at most 48.8 KiB") {
		t.Errorf("the task's error: %+v", got.Error)
	}
	if f.model.n != 3 {
		t.Errorf("the model was asked %d times; the third output should have stopped the task", f.model.n)
	}
}

// TestLogBudget: the budget counts the task's log too, so a task that
// never stores a large output but loops on small commands is stopped the
// same way; what the task keeps is in its row, and its log is whole.
func TestLogBudget(t *testing.T) {
	f := newFixtureWith(t, sqlite, func(c *executor.Config) { c.OutputBudget = 30_000 })
	ag, err := f.svc.CreateAgent(t.Context(), f.actor, service.AgentParams{Name: "chatty", Config: skilld.AgentConfig{Model: "test:m"}})
	if err != nil {
		t.Fatal(err)
	}
	for range 200 {
		f.model.steps = append(f.model.steps, call(agent.ToolShell, map[string]string{"command": "echo small"}))
	}
	task, err := f.svc.RunTask(t.Context(), f.actor, service.StartTaskParams{AgentRef: service.AgentRef{ID: ag.ID}, Input: "go"})
	if err != nil {
		t.Fatal(err)
	}
	got := f.wait(t, task.ID, skilld.TaskFailed)
	if got.Error == nil || got.Error.Code != skilld.ETOOLARGE || !strings.Contains(got.Error.Message, "of log and large tool outputs") {
		t.Errorf("the task's error: %+v", got.Error)
	}
	if f.model.n == 0 || f.model.n >= 200 {
		t.Errorf("the model was asked %d times; the log should have stopped the task well before its 200 steps", f.model.n)
	}
	entries, err := f.db.TaskLogList(t.Context(), &store.TaskLogListParams{TaskID: task.ID, Limit: 10000})
	if err != nil {
		t.Fatal(err)
	}
	var logBytes int64
	for _, e := range entries {
		logBytes += int64(len(e.Payload))
	}
	if got.Stored.LogBytes != logBytes || got.Stored.OutputBytes != 0 || logBytes < 30_000 {
		t.Errorf("the task row keeps %+v; its %d log entries are %d bytes", got.Stored, len(entries), logBytes)
	}
	if last := entries[len(entries)-1]; !strings.Contains(string(last.Payload), "task.failed") {
		t.Errorf("the log does not end with the failure: %s", last.Payload)
	}
}
