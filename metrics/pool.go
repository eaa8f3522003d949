package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/skilld/skilld/executor/sched"
)

// TopWorkspaces is how many workspaces the per-workspace series of the
// pool report at a scrape: the busiest ones. A series per workspace would
// grow with every tenant (thousands of them on a shared server, each
// series kept by Prometheus for as long as it keeps data); the busiest
// few are what a dashboard of a starving queue needs, and the totals
// (skilld_queued_tasks, skilld_running_tasks) count everyone.
const TopWorkspaces = 10

var (
	runningDesc = prometheus.NewDesc(Namespace+"_running_tasks",
		"Tasks holding a place in this server's local executor (--max-running-tasks).", nil, nil)
	workspaceQueuedDesc = prometheus.NewDesc(Namespace+"_workspace_queued_tasks",
		"Tasks waiting for a place in this server's local executor, for the workspaces with the most waiting (at most 10, by workspace ID).", []string{"workspace"}, nil)
	workspaceRunningDesc = prometheus.NewDesc(Namespace+"_workspace_running_tasks",
		"Places of this server's local executor held, for the same workspaces as skilld_workspace_queued_tasks.", []string{"workspace"}, nil)
)

// poolCollector reads the local executor's pool at each scrape.
type poolCollector struct {
	running func() int
	busiest func(n int) []sched.Load
}

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- runningDesc
	ch <- workspaceQueuedDesc
	ch <- workspaceRunningDesc
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(runningDesc, prometheus.GaugeValue, float64(c.running()))
	for _, l := range c.busiest(TopWorkspaces) {
		ch <- prometheus.MustNewConstMetric(workspaceQueuedDesc, prometheus.GaugeValue, float64(l.Waiting), l.Workspace)
		ch <- prometheus.MustNewConstMetric(workspaceRunningDesc, prometheus.GaugeValue, float64(l.Held), l.Workspace)
	}
}

// WatchPool adds skilld_running_tasks and the per-workspace series of the
// TopWorkspaces busiest workspaces, read at each scrape from running and
// busiest (executor.Local's Running and Busiest). Like WatchQueue, it is
// separate from New because the executor is made after the metrics.
func (m *Metrics) WatchPool(running func() int, busiest func(n int) []sched.Load) error {
	return m.reg.Register(&poolCollector{running: running, busiest: busiest})
}
