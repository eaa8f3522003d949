package metrics_test

import (
	"fmt"
	"testing"

	"github.com/skilld/skilld/executor/sched"
	"github.com/skilld/skilld/metrics"
)

// TestPoolSeriesStayFew: with thirty workspaces in the pool, the
// per-workspace series are the TopWorkspaces busiest, and the totals
// count everyone.
func TestPoolSeriesStayFew(t *testing.T) {
	s := sched.New[int](4)
	for w := range 30 {
		for i := range w + 1 { // workspace w has w+1 tasks
			s.Push(fmt.Sprint("ws-", w), 0, i)
		}
	}
	for range 4 {
		s.Next()
	}
	m := metrics.New(metrics.Config{})
	if err := m.WatchPool(s.Held, s.Busiest); err != nil {
		t.Fatal(err)
	}
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	gauges := map[string]map[string]float64{}
	for _, f := range fams {
		for _, mt := range f.GetMetric() {
			ws := ""
			for _, l := range mt.GetLabel() {
				if l.GetName() == "workspace" {
					ws = l.GetValue()
				}
			}
			if gauges[f.GetName()] == nil {
				gauges[f.GetName()] = map[string]float64{}
			}
			gauges[f.GetName()][ws] = mt.GetGauge().GetValue()
		}
	}
	if got := gauges["skilld_running_tasks"][""]; got != 4 {
		t.Errorf("skilld_running_tasks = %v, want 4", got)
	}
	queued := gauges["skilld_workspace_queued_tasks"]
	if len(queued) != metrics.TopWorkspaces || len(gauges["skilld_workspace_running_tasks"]) != metrics.TopWorkspaces {
		t.Fatalf("per-workspace series: %d queued, %d running; want %d each", len(queued), len(gauges["skilld_workspace_running_tasks"]), metrics.TopWorkspaces)
	}
	// The places went to ws-0 to ws-3, the first in line; the busiest are
	// ws-29 (30 tasks waiting) down to ws-20.
	for w := 20; w < 30; w++ {
		if _, ok := queued[fmt.Sprint("ws-", w)]; !ok {
			t.Errorf("ws-%d, one of the busiest, has no series: %v", w, queued)
		}
	}
	if got := queued["ws-29"]; got != 30 {
		t.Errorf("ws-29 has %v queued, want 30", got)
	}
}
