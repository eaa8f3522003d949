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
// count per workspace and status (the store counts per workspace), so a
// scrape costs 6 small queries a workspace.
func StoreTasks(db store.Store) func(context.Context) (map[skilld.TaskStatus]int, error) {
	return func(ctx context.Context) (map[skilld.TaskStatus]int, error) {
		out := make(map[skilld.TaskStatus]int, len(TaskStatuses))
		for offset := 0; ; offset += store.MaxPageSize {
			ws, err := db.WorkspaceList(ctx, &store.WorkspaceListParams{Page: store.Page{Limit: store.MaxPageSize, Offset: offset}})
			if err != nil {
				return nil, fmt.Errorf("listing workspaces: %w", err)
			}
			for _, w := range ws {
				for _, st := range TaskStatuses {
					_, n, err := db.TaskList(ctx, &store.TaskListParams{WorkspaceID: w.ID, Status: st, Page: store.Page{Limit: 1}})
					if err != nil {
						return nil, fmt.Errorf("counting the %s tasks of workspace %s: %w", st, w.Name, err)
					}
					out[st] += n
				}
			}
			if len(ws) < store.MaxPageSize {
				return out, nil
			}
		}
	}
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
