package executor_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/blob/fsblob"
	"github.com/skilld/skilld/executor"
	"github.com/skilld/skilld/executor/executortest"
	"github.com/skilld/skilld/sandbox/bwrap/bwraptest"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/storetest"
)

// TestConformance runs the executor suite on the local executor, over
// SQLite and PostgreSQL. A restart is Shutdown — every running task
// suspended where it is — and a new executor over the same storage and
// sandboxes, whose Recover picks the tasks up.
func TestConformance(t *testing.T) {
	for _, d := range storetest.Drivers(t) {
		t.Run(d.Name, func(t *testing.T) {
			executortest.Run(t, func(t *testing.T, m *executortest.Model, o executortest.Options) *executortest.Env {
				return localEnv(t, d.Open(t), m, o)
			})
		})
	}
}

func localEnv(t testing.TB, db store.Store, m *executortest.Model, o executortest.Options) *executortest.Env {
	blobs, err := fsblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sbx, sbCfg := bwraptest.New(t)
	var exec *executor.Local
	// A server: the service and the executor it runs tasks with.
	start := func() *service.Service {
		return service.New(db, blobs, nil, service.Config{Executor: func(svc *service.Service) service.Executor {
			exec = executor.New(executor.Config{Service: svc, DB: db, Blobs: blobs, Sandboxes: sbx, MaxRunning: o.MaxRunning,
				OpenModel: func(ref string) (model.Model, string, error) { return m, strings.TrimPrefix(ref, "test:"), nil },
				Tokenizer: func(string) (agent.Counter, error) { return words{}, nil },
				Window:    func(string) (int, bool) { return 100000, true }, TaskTimeout: o.TaskTimeout,
			})
			return exec
		}})
	}
	svc := start()
	t.Cleanup(func() { exec.Shutdown() })
	env := &executortest.Env{Service: svc, Actor: executortest.Admin(t, svc), Queue: true,
		Workspace: func(id string) string { return filepath.Join(sbCfg.Root, id, "workspace") }}
	env.Restart = func(t *testing.T) {
		exec.Shutdown()
		env.Service = start()
		if err := exec.Recover(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	return env
}
