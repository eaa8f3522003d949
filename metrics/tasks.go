package metrics

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

// TaskStatuses are the statuses skilld_tasks reports, each always present
// (0 when no task has it), so that a dashboard's series do not come and go.
var TaskStatuses = []skilld.TaskStatus{skilld.TaskQueued, skilld.TaskRunning, skilld.TaskWaitingForApproval,
	skilld.TaskCompleted, skilld.TaskFailed, skilld.TaskCancelled}

// StoreTasks counts tasks by status from the store, for Config.Tasks: one
// grouped count across all workspaces per scrape.
func StoreTasks(db store.Store) func(context.Context) (map[skilld.TaskStatus]int, error) {
	return db.TaskCountByStatus
}

// taskCollector reports skilld_tasks from the store at each scrape, so the
// gauge is right across restarts and across servers sharing a database.
type taskCollector struct {
	count   func(context.Context) (map[skilld.TaskStatus]int, error)
	timeout time.Duration
}

var tasksDesc = prometheus.NewDesc(Namespace+"_tasks", "Stored tasks by status (all workspaces), counted at each scrape.", []string{"status"}, nil)

func (c *taskCollector) Describe(ch chan<- *prometheus.Desc) { ch <- tasksDesc }

func (c *taskCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	counts, err := c.count(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(tasksDesc, fmt.Errorf("counting tasks: %w", err))
		return
	}
	for _, st := range TaskStatuses {
		ch <- prometheus.MustNewConstMetric(tasksDesc, prometheus.GaugeValue, float64(counts[st]), string(st))
	}
}

// TasksExpired counts tasks the retention sweeper deleted
// (service.TaskSweep's Report).
func (m *Metrics) TasksExpired(n int) { m.expired.Add(float64(n)) }
