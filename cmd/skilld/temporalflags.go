package main

import (
	"cmp"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	skdtemporal "github.com/skilld/skilld/executor/temporal"
)

// temporalFlags say where Temporal is, for serve --executor temporal and
// worker.
type temporalFlags struct {
	hostPort, namespace, queue string
	heartbeat                  time.Duration
}

func (f *temporalFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.hostPort, "temporal", os.Getenv("SKILLD_TEMPORAL"),
		"the Temporal frontend, HOST:PORT (env SKILLD_TEMPORAL)")
	fs.StringVar(&f.namespace, "namespace", cmp.Or(os.Getenv("SKILLD_TEMPORAL_NAMESPACE"), "default"),
		"the Temporal namespace (env SKILLD_TEMPORAL_NAMESPACE)")
	fs.StringVar(&f.queue, "task-queue", cmp.Or(os.Getenv("SKILLD_TEMPORAL_TASK_QUEUE"), skdtemporal.DefaultTaskQueue),
		"the Temporal task queue servers and workers share (env SKILLD_TEMPORAL_TASK_QUEUE)")
}

// registerHeartbeat adds the time to notice a dead worker, which the
// server sets on the workflows it starts (their workflow task timeout).
func (f *temporalFlags) registerHeartbeat(fs *flag.FlagSet) error {
	fs.DurationVar(&f.heartbeat, "temporal-heartbeat", skdtemporal.DefaultHeartbeat,
		"how long a task's worker may go without a heartbeat before another worker takes the task over;\na cancel reaches a step in progress within 0.8 of it (env SKILLD_TEMPORAL_HEARTBEAT)")
	return envFlags(fs, map[string]string{"temporal-heartbeat": "SKILLD_TEMPORAL_HEARTBEAT"})
}

// dial connects to Temporal.
func (f *temporalFlags) dial(logger *slog.Logger) (client.Client, error) {
	if f.hostPort == "" {
		return nil, fmt.Errorf("no Temporal address: pass --temporal HOST:PORT or set SKILLD_TEMPORAL")
	}
	c, err := client.Dial(client.Options{HostPort: f.hostPort, Namespace: f.namespace, Logger: sdklog.NewStructuredLogger(logger)})
	if err != nil {
		return nil, fmt.Errorf("connecting to Temporal at %s (namespace %s): %w", f.hostPort, f.namespace, err)
	}
	return c, nil
}
