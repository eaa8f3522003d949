package executor_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/executor/executortest"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store/storetest"
)

// tenants is a local executor with two workspaces, a and b, each with an
// agent of the suite's model, whose turns block until released: nothing
// gives a place back but the test.
type tenants struct {
	env   *executortest.Env
	model *executortest.Model
	a, b  service.Actor
}

func newTenants(t *testing.T, places int) *tenants {
	m := executortest.NewModel()
	e := localEnv(t, storetest.OpenSQLite(t), m, executortest.Options{MaxRunning: places})
	tn := &tenants{env: e, model: m}
	for _, ws := range []struct {
		name  string
		actor *service.Actor
	}{{"team-a", &tn.a}, {"team-b", &tn.b}} {
		if _, err := e.Service.CreateWorkspace(t.Context(), e.Actor, service.CreateWorkspaceParams{Name: ws.name}); err != nil {
			t.Fatal(err)
		}
		in, err := e.Service.In(t.Context(), e.Actor, ws.name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Service.CreateAgent(t.Context(), in, service.AgentParams{Name: "worker",
			Config: skilld.AgentConfig{Model: "test:m", Context: skilld.ContextSettings{Window: 32000}}}); err != nil {
			t.Fatal(err)
		}
		*ws.actor = in
	}
	return tn
}

// blocked is a task whose one model call waits for release.
type blocked struct {
	*skilld.Task
	entered, release chan struct{}
}

// wait waits for b's model call to arrive, the sign its task got a
// place. The deadline, far beyond any run here, only keeps a scheduler
// that gives the place to another task from hanging the test.
func (b blocked) wait(t *testing.T, what string) {
	t.Helper()
	select {
	case <-b.entered:
	case <-time.After(time.Minute):
		t.Fatalf("%s never got a place", what)
	}
}

// start starts a task in a's workspace whose model call blocks.
func (tn *tenants) start(t *testing.T, a service.Actor, input string) blocked {
	t.Helper()
	b := blocked{entered: make(chan struct{}), release: make(chan struct{})}
	tn.model.Script(input, executortest.Block(b.entered, b.release, executortest.Answer("done")))
	task, err := tn.env.Service.RunTask(t.Context(), a, service.StartTaskParams{AgentRef: service.AgentRef{ID: "worker"}, Input: input})
	if err != nil {
		t.Fatal(err)
	}
	b.Task = task
	t.Cleanup(func() {
		select {
		case <-b.release:
		default:
			close(b.release)
		}
	})
	return b
}

func (tn *tenants) get(t *testing.T, a service.Actor, id string) *skilld.Task {
	t.Helper()
	task, err := tn.env.Service.GetTask(t.Context(), a, service.GetTaskParams{TaskRef: service.TaskRef{ID: id}})
	if err != nil {
		t.Fatal(err)
	}
	return task
}

// statuses counts the statuses of tasks.
func (tn *tenants) statuses(t *testing.T, a service.Actor, tasks []blocked) map[skilld.TaskStatus]int {
	t.Helper()
	n := map[skilld.TaskStatus]int{}
	for _, b := range tasks {
		n[tn.get(t, a, b.ID).Status]++
	}
	return n
}

// The operator's case: three places, workspace b running three tasks
// with twenty more queued, then one task of workspace a. The first place
// that frees is a's: not one of b's queued tasks starts between a's
// start and a's run.
func TestFairnessAcrossWorkspaces(t *testing.T) {
	tn := newTenants(t, 3)
	var running, queued []blocked
	for i := range 3 {
		running = append(running, tn.start(t, tn.b, fmt.Sprint("b running ", i)))
		running[i].wait(t, fmt.Sprint("b's task ", i))
	}
	for i := range 20 {
		queued = append(queued, tn.start(t, tn.b, fmt.Sprint("b queued ", i)))
		if queued[i].Status != skilld.TaskQueued {
			t.Fatalf("b's task %d started as %s with every place taken", i, queued[i].Status)
		}
	}
	a := tn.start(t, tn.a, "a's one task")
	if a.Status != skilld.TaskQueued {
		t.Fatalf("a's task started as %s with every place taken", a.Status)
	}
	// a's task is next in line; b's first queued task after it.
	if got := tn.get(t, tn.a, a.ID).QueuePosition; got != 1 {
		t.Errorf("a's task is at position %d, want 1", got)
	}
	if got := tn.get(t, tn.b, queued[0].ID).QueuePosition; got != 2 {
		t.Errorf("b's first queued task is at position %d, want 2", got)
	}
	if got := tn.get(t, tn.b, queued[19].ID).QueuePosition; got != 21 {
		t.Errorf("b's last queued task is at position %d, want 21", got)
	}

	// One place frees: a's task runs in it. Every place is held again
	// then (b's two, a's one), so no task of b can have started since.
	close(running[0].release)
	a.wait(t, "a's task, at the first free place,")
	if n := tn.statuses(t, tn.b, queued); n[skilld.TaskQueued] != 20 {
		t.Fatalf("b's queued tasks after a's started: %v; want all 20 still queued", n)
	}
	if got := tn.get(t, tn.a, a.ID); got.Status != skilld.TaskRunning {
		t.Errorf("a's task is %s", got.Status)
	}
	// The next place goes back to b, to its first queued task.
	close(a.release)
	queued[0].wait(t, "b's first queued task")
	if n := tn.statuses(t, tn.b, queued[1:]); n[skilld.TaskQueued] != 19 {
		t.Errorf("b's later tasks: %v; want 19 queued", n)
	}
}

// A workspace at its running cap keeps its tasks queued while another
// workspace's take the free places; raising the cap starts them at once.
func TestWorkspaceRunningCap(t *testing.T) {
	tn := newTenants(t, 3)
	one := 1
	if _, err := tn.env.Service.UpdateWorkspace(t.Context(), tn.a, service.UpdateWorkspaceParams{MaxRunningTasks: &one}); err != nil {
		t.Fatal(err)
	}
	var as []blocked
	for i := range 3 {
		as = append(as, tn.start(t, tn.a, fmt.Sprint("a ", i)))
	}
	as[0].wait(t, "a's first task")
	if n := tn.statuses(t, tn.a, as[1:]); n[skilld.TaskQueued] != 2 {
		t.Fatalf("a's tasks past its cap of 1: %v; want 2 queued", n)
	}
	// b's task takes a free place at once, ahead of a's queued ones.
	b := tn.start(t, tn.b, "b's task")
	if b.Status != skilld.TaskRunning {
		t.Fatalf("b's task started as %s with a place free", b.Status)
	}
	b.wait(t, "b's task")
	// A place is still free, and a's tasks still wait for it.
	if n := tn.statuses(t, tn.a, as[1:]); n[skilld.TaskQueued] != 2 {
		t.Fatalf("a's tasks with a place free: %v; want 2 queued (a is at its cap)", n)
	}
	if got := tn.get(t, tn.a, as[1].ID).QueuePosition; got != 1 {
		t.Errorf("a's first queued task is at position %d, want 1", got)
	}
	// Raised to 2, the free place goes to a's next task.
	two := 2
	if _, err := tn.env.Service.UpdateWorkspace(t.Context(), tn.a, service.UpdateWorkspaceParams{MaxRunningTasks: &two}); err != nil {
		t.Fatal(err)
	}
	as[1].wait(t, "a's second task, its cap raised,")
	if got := tn.get(t, tn.a, as[2].ID); got.Status != skilld.TaskQueued {
		t.Errorf("a's third task is %s with every place taken", got.Status)
	}
	// One of a's tasks ends: its place goes to a's last one.
	close(as[0].release)
	as[2].wait(t, "a's third task")
}
