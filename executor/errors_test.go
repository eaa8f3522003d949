package executor_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/executor"
	"github.com/skilld/skilld/sandbox"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/storetest"
)

// secret is what an internal error may carry: an address, a credential.
const secret = "dial 10.0.0.7:5432 with password=hunter2-s3cr3t"

// failingSandboxes is a provider whose Create fails, while fail is set,
// with an internal (untyped) error.
type failingSandboxes struct {
	sandbox.Provider
	fail *atomic.Bool
}

func (p failingSandboxes) Create(ctx context.Context, params sandbox.CreateParams) (sandbox.Sandbox, error) {
	if p.fail.Load() {
		return nil, fmt.Errorf("creating the sandbox: %s", secret)
	}
	return p.Provider.Create(ctx, params)
}

// lockedBuffer is a log destination tests read while tasks write to it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestInternalErrorsStayOnTheServer fails a task at its start (its
// sandbox cannot be made) and one in its run (the model fails), each with
// an internal error whose text holds a secret: the task's row and its log,
// which API clients read, say "internal error"; the server's log has the
// text, with the task's ID.
func TestInternalErrorsStayOnTheServer(t *testing.T) {
	var fail atomic.Bool
	logs := &lockedBuffer{}
	f := newFixtureWith(t, func(t *testing.T) store.Store { return storetest.OpenSQLite(t) }, func(cfg *executor.Config) {
		cfg.Sandboxes = failingSandboxes{Provider: cfg.Sandboxes, fail: &fail}
		cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
	})
	ag, _ := f.agentWithSkill(t, skilld.ToolPolicy{})
	for _, tc := range []struct {
		name    string
		prepare func()
	}{
		{"sandbox", func() { fail.Store(true) }},
		{"model", func() {
			fail.Store(false)
			f.model.steps = append(f.model.steps, func(context.Context, *model.Request) (*model.Response, error) {
				return nil, fmt.Errorf("calling the provider: %s", secret)
			})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.prepare()
			task, err := f.svc.RunTask(t.Context(), f.actor, service.StartTaskParams{AgentRef: service.AgentRef{ID: ag.ID}, Input: "x"})
			if err != nil {
				t.Fatal(err)
			}
			failed := f.wait(t, task.ID, skilld.TaskFailed)
			if failed.Error == nil || *failed.Error != (skilld.TaskError{Code: skilld.EINTERNAL, Message: "internal error"}) {
				t.Errorf("the task's error: %+v", failed.Error)
			}
			entries, err := f.svc.TaskEvents(t.Context(), f.actor, service.TaskEventsParams{TaskRef: service.TaskRef{ID: task.ID}})
			if err != nil {
				t.Fatal(err)
			}
			var logged strings.Builder
			for _, e := range entries {
				logged.Write(e.Payload)
			}
			if strings.Contains(logged.String(), "hunter2") || !strings.Contains(logged.String(), `"error":"internal error"`) {
				t.Errorf("the task's log:\n%s", logged.String())
			}
			if l := logs.String(); !strings.Contains(l, "task="+task.ID) || !strings.Contains(l, secret) {
				t.Errorf("the server's log does not have the error:\n%s", l)
			}
		})
	}
}
