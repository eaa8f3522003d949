package service_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/storetest"
)

// watcher is an executor that leaves every task queued and records the
// limits the service tells it.
type watcher struct {
	recorder
	seen   sync.Mutex
	limits map[string]service.TaskLimits
}

func (w *watcher) LimitsChanged(workspaceID string, l service.TaskLimits) {
	w.seen.Lock()
	defer w.seen.Unlock()
	w.limits[workspaceID] = l
}

func limitsEnv(t *testing.T, defaults service.TaskLimits) (*env, *watcher, *skilld.Agent) {
	t.Helper()
	w := &watcher{limits: map[string]service.TaskLimits{}}
	e := newEnv(t, storetest.Drivers(t)[0].Open, service.Config{TaskLimits: defaults, Executor: func(*service.Service) service.Executor { return w }}, nil)
	ag, err := e.svc.CreateAgent(t.Context(), e.member, service.AgentParams{Name: "a", Config: skilld.AgentConfig{Model: "openai:gpt-4o-mini"}})
	if err != nil {
		t.Fatal(err)
	}
	return e, w, ag
}

func runTask(t *testing.T, e *env, a service.Actor, agent string) (*skilld.Task, error) {
	t.Helper()
	return e.svc.RunTask(t.Context(), a, service.StartTaskParams{AgentRef: service.AgentRef{ID: agent}, Input: "go"})
}

func queuedIn(t *testing.T, e *env, workspaceID string) int {
	t.Helper()
	_, n, err := e.db.TaskList(t.Context(), &store.TaskListParams{WorkspaceID: workspaceID, Status: skilld.TaskQueued})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestQueuedCap: a workspace with as many queued tasks as its cap gets
// new starts refused, with nothing recorded, a message naming the cap and
// the way to raise it, and a Retry-After; its own cap replaces the
// server's; other workspaces are not held back by it.
func TestQueuedCap(t *testing.T) {
	e, _, ag := limitsEnv(t, service.TaskLimits{MaxQueued: 2})
	for range 2 {
		if _, err := runTask(t, e, e.member, ag.ID); err != nil {
			t.Fatal(err)
		}
	}
	_, err := runTask(t, e, e.member, ag.ID)
	wantCode(t, err, skilld.ERATELIMITED)
	msg := skilld.ErrorMessage(err)
	for _, want := range []string{`workspace "team" has 2 tasks queued`, "--workspace-max-queued", "retry in 10 s", `PATCH /v1/workspaces/team {"max_queued_tasks": N}`} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal %q does not say %q", msg, want)
		}
	}
	if d := skilld.ErrorDetails(err); len(d) != 1 || d[0] != (skilld.Detail{Field: "retry_after", Message: "10"}) {
		t.Errorf("details %+v, want the retry_after", d)
	}
	if n := queuedIn(t, e, e.member.WorkspaceID); n != 2 {
		t.Errorf("%d tasks recorded, want the 2 admitted", n)
	}
	// Another workspace has room of its own.
	other, err := e.svc.CreateAgent(t.Context(), e.other, service.AgentParams{Name: "a", Config: skilld.AgentConfig{Model: "openai:gpt-4o-mini"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runTask(t, e, e.other, other.ID); err != nil {
		t.Errorf("another workspace's start: %v", err)
	}

	// The workspace's own cap: raised, then none, then the server's again.
	three, none, server := 3, 0, -1
	root, err := e.svc.In(t.Context(), e.root, "team")
	if err != nil {
		t.Fatal(err)
	}
	w := must[*skilld.Workspace](t)(e.svc.UpdateWorkspace(t.Context(), root, service.UpdateWorkspaceParams{MaxQueuedTasks: &three}))
	if w.MaxQueuedTasks == nil || *w.MaxQueuedTasks != 3 || w.MaxRunningTasks != nil {
		t.Errorf("updated %+v", w)
	}
	if _, err := runTask(t, e, e.member, ag.ID); err != nil {
		t.Fatalf("a start within the raised cap: %v", err)
	}
	_, err = runTask(t, e, e.member, ag.ID)
	wantCode(t, err, skilld.ERATELIMITED)
	if msg := skilld.ErrorMessage(err); !strings.Contains(msg, "the workspace's own max_queued_tasks") {
		t.Errorf("refusal %q does not name the workspace's own cap", msg)
	}
	must[*skilld.Workspace](t)(e.svc.UpdateWorkspace(t.Context(), root, service.UpdateWorkspaceParams{MaxQueuedTasks: &none}))
	if _, err := runTask(t, e, e.member, ag.ID); err != nil {
		t.Fatalf("a start with no cap: %v", err)
	}
	must[*skilld.Workspace](t)(e.svc.UpdateWorkspace(t.Context(), root, service.UpdateWorkspaceParams{MaxQueuedTasks: &server}))
	_, err = runTask(t, e, e.member, ag.ID)
	wantCode(t, err, skilld.ERATELIMITED)
}

// TestQueuedCapUnderRacingStarts: starts racing on one server cannot pass
// the cap together.
func TestQueuedCapUnderRacingStarts(t *testing.T) {
	e, _, ag := limitsEnv(t, service.TaskLimits{MaxQueued: 3})
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[string]int{}
	for range 10 {
		wg.Go(func() {
			_, err := runTask(t, e, e.member, ag.ID)
			mu.Lock()
			codes[skilld.ErrorCode(err)]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if codes[""] != 3 || codes[skilld.ERATELIMITED] != 7 {
		t.Errorf("10 racing starts with room for 3: %v", codes)
	}
	if n := queuedIn(t, e, e.member.WorkspaceID); n != 3 {
		t.Errorf("%d tasks queued, want 3", n)
	}
}

// TestUpdateWorkspace: instance admins only; values checked; the
// executor hears the limits that now hold (the workspace's own, or the
// server's where it has none).
func TestUpdateWorkspace(t *testing.T) {
	e, w, _ := limitsEnv(t, service.TaskLimits{MaxRunning: 5, MaxQueued: 100})
	two := 2
	_, err := e.svc.UpdateWorkspace(t.Context(), e.admin, service.UpdateWorkspaceParams{MaxRunningTasks: &two})
	wantCode(t, err, skilld.EFORBIDDEN)
	root, err := e.svc.In(t.Context(), e.root, "team")
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []int{-2, service.MaxTaskLimit + 1} {
		_, err := e.svc.UpdateWorkspace(t.Context(), root, service.UpdateWorkspaceParams{MaxQueuedTasks: &bad})
		wantCode(t, err, skilld.EINVALID)
		if d := skilld.ErrorDetails(err); len(d) != 1 || d[0].Field != "max_queued_tasks" {
			t.Errorf("%d: details %+v", bad, d)
		}
	}
	must[*skilld.Workspace](t)(e.svc.UpdateWorkspace(t.Context(), root, service.UpdateWorkspaceParams{MaxRunningTasks: &two}))
	if got := w.limits[root.WorkspaceID]; got != (service.TaskLimits{MaxRunning: 2, MaxQueued: 100}) {
		t.Errorf("the executor was told %+v", got)
	}
	if got := must[service.TaskLimits](t)(e.svc.TaskLimits(t.Context(), root.WorkspaceID)); got != (service.TaskLimits{MaxRunning: 2, MaxQueued: 100}) {
		t.Errorf("limits now %+v", got)
	}
	// A workspace without caps of its own has the server's.
	if got := must[service.TaskLimits](t)(e.svc.TaskLimits(t.Context(), e.other.WorkspaceID)); got != (service.TaskLimits{MaxRunning: 5, MaxQueued: 100}) {
		t.Errorf("the server's limits %+v", got)
	}
	list := must[*service.WorkspaceList](t)(e.svc.ListWorkspaces(t.Context(), e.admin, service.ListWorkspacesParams{}))
	if len(list.Items) != 1 || list.Items[0].MaxRunningTasks == nil || *list.Items[0].MaxRunningTasks != 2 || list.Items[0].MaxQueuedTasks != nil {
		t.Errorf("the workspace as listed: %+v", list.Items)
	}
}
