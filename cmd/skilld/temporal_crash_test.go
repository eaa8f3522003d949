package main

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/skilld/skilld/executor/temporal/temporaltest"
	"github.com/skilld/skilld/internal/testbin"
	"github.com/skilld/skilld/sandbox/bwrap/bwraptest"
	"github.com/skilld/skilld/store/storetest"
)

// TestTemporalWorkersKilled: a server with --executor temporal and two
// skilld worker processes on one PostgreSQL database, one blob store and
// one work dir; a random worker is killed with SIGKILL every few hundred
// milliseconds and started again. The other worker (or the restarted one)
// takes each task over once its workflow task times out, resuming from
// the task log, and every task ends as it would have without the kills —
// the same checks as TestCrashResume.
func TestTemporalWorkersKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and restarts workers for a while; skipped in -short mode")
	}
	bwraptest.Require(t)
	srv := temporaltest.Start()
	defer srv.Stop()
	srv.Require(t)
	dbURL := storetest.FreshPostgresURL(t)
	bin := testbin.Skilld(t)
	blobs := "file://" + filepath.ToSlash(t.TempDir())
	work := t.TempDir()
	t.Cleanup(func() { bwraptest.UnmountAll(t, work) })
	queue := fmt.Sprint("crash-", rand.Uint64())
	shared := []string{"--db", dbURL, "--blobs", blobs, "--temporal", srv.HostPort, "--task-queue", queue}
	addr := freeAddr(t)
	api := &crashServer{t: t, bin: bin, addr: addr,
		args: append([]string{"serve", "--executor", "temporal", "--temporal-heartbeat", "2s", "--addr", addr, "--data", t.TempDir()}, shared...),
		env:  []string{"SKILLD_BOOTSTRAP_TOKEN=" + crashToken}}
	api.start()
	defer api.kill()
	var workers []*crashServer
	for range 2 {
		w := &crashServer{t: t, bin: bin, args: append([]string{"worker", "--work-dir", work, "--keep-sandboxes", "--max-running-tasks", "8"}, shared...),
			env: []string{"SKILLD_ALLOW_SCRIPTED_MODELS=1"}}
		w.start()
		defer w.kill()
		workers = append(workers, w)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for i, w := range workers {
				t.Logf("worker %d log:\n%s", i, w.log.String())
			}
		}
	})
	// 40 tasks: a task runs on one worker from start to end unless that
	// worker dies (its steps are local activities), and is soon done, so
	// the kills need many tasks in flight to land on some.
	crashRun(t, api, work, 40, func(rng *rand.Rand) {
		w := workers[rng.IntN(len(workers))]
		w.kill()
		w.start()
	})
}
