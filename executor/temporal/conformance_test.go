package temporal_test

import (
	"crypto/rand"
	"encoding/hex"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/blob/fsblob"
	"github.com/skilld/skilld/executor"
	"github.com/skilld/skilld/executor/executortest"
	skdtemporal "github.com/skilld/skilld/executor/temporal"
	"github.com/skilld/skilld/sandbox/bwrap/bwraptest"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/storetest"
)

type words struct{}

func (words) Count(s string) int { return len(strings.Fields(s)) + 1 }

// TestConformance runs the executor suite on Temporal: the server's side
// starts workflows on a dev server, a worker in this process runs them. A
// restart stops the worker abruptly — its runs suspended, its activities
// abandoned — and starts a new worker, which takes the tasks over.
func TestConformance(t *testing.T) {
	c := server.Client(t)
	for _, d := range storetest.Drivers(t) {
		t.Run(d.Name, func(t *testing.T) {
			executortest.Run(t, func(t *testing.T, m *executortest.Model, o executortest.Options) *executortest.Env {
				return temporalEnv(t, c, d.Open(t), m, o).Env
			})
		})
	}
}

// tenv is an Env with what the Temporal tests look into.
type tenv struct {
	*executortest.Env
	queue  string
	svc    *service.Service
	client client.Client
	// handover stops the worker as skilld worker does on SIGTERM: it
	// drains it, starts a new one, runs between, then stops the old one.
	handover func(between func())
}

func temporalEnv(t testing.TB, c client.Client, db store.Store, m *executortest.Model, o executortest.Options) *tenv {
	return temporalEnvWith(t, c, db, m, o, 3*time.Second)
}

// temporalEnvWith is temporalEnv whose executor notices a dead worker
// after heartbeat (Executor.Heartbeat).
func temporalEnvWith(t testing.TB, c client.Client, db store.Store, m *executortest.Model, o executortest.Options, heartbeat time.Duration) *tenv {
	blobs, err := fsblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	queue := "test-" + random()
	svc := service.New(db, blobs, nil, service.Config{Executor: func(*service.Service) service.Executor {
		return &skdtemporal.Executor{Client: c, TaskQueue: queue, DB: db, Heartbeat: heartbeat}
	}})
	sbx, sbCfg := bwraptest.New(t)
	startWorker := func() (worker.Worker, *skdtemporal.Activities) {
		runner := executor.New(executor.Config{Service: svc, DB: db, Blobs: blobs, Sandboxes: sbx,
			OpenModel: func(ref string) (model.Model, string, error) { return m, strings.TrimPrefix(ref, "test:"), nil },
			Tokenizer: func(string) (agent.Counter, error) { return words{}, nil },
			Window:    func(string) (int, bool) { return 100000, true }, TaskTimeout: o.TaskTimeout,
		})
		a := &skdtemporal.Activities{Runner: runner, DB: db}
		w := skdtemporal.NewWorker(c, queue, a, worker.Options{MaxConcurrentActivityExecutionSize: max(o.MaxRunning, 0)})
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		return w, a
	}
	w, a := startWorker()
	t.Cleanup(func() { a.Stop(); w.Stop() })
	actor := executortest.Admin(t, svc)
	handover := func(between func()) {
		oldW, oldA := w, a
		oldA.Drain()
		w, a = startWorker()
		between()
		oldW.Stop()
		oldA.Stop()
	}
	return &tenv{queue: queue, svc: svc, client: c, handover: handover, Env: &executortest.Env{Service: svc, Actor: actor,
		Workspace: func(id string) string { return filepath.Join(sbCfg.Root, id, "workspace") },
		Restart: func(t *testing.T) {
			a.Stop()
			w.Stop()
			w, a = startWorker()
		}}}
}

func random() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
