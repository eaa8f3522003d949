package metrics

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

// StoreStorage reads the workspaces whose tasks keep the most, for
// Config.Storage: one grouped sum over the task rows per scrape.
func StoreStorage(db store.Store) func(context.Context, int) ([]*skilld.WorkspaceUsage, error) {
	return func(ctx context.Context, n int) ([]*skilld.WorkspaceUsage, error) {
		return db.WorkspaceStorageTop(ctx, &store.WorkspaceStorageTopParams{Limit: n})
	}
}

var (
	workspaceStoredDesc = prometheus.NewDesc(Namespace+"_workspace_stored_bytes",
		"Bytes the tasks of a workspace keep (logs and large tool outputs), for the workspaces that keep the most (at most 10, by workspace ID), by kind (log, output); counted against --workspace-storage-quota.",
		[]string{"workspace", "kind"}, nil)
	workspaceQuotaDesc = prometheus.NewDesc(Namespace+"_workspace_storage_quota_bytes",
		"The storage quota a workspace set for itself, for the same workspaces as skilld_workspace_stored_bytes (absent when the server's --workspace-storage-quota applies).",
		[]string{"workspace"}, nil)
)

// storageCollector reports what the workspaces that keep the most store,
// read from the database at each scrape.
type storageCollector struct {
	top     func(context.Context, int) ([]*skilld.WorkspaceUsage, error)
	timeout time.Duration
}

func (c *storageCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- workspaceStoredDesc
	ch <- workspaceQuotaDesc
}

func (c *storageCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	top, err := c.top(ctx, TopWorkspaces)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(workspaceStoredDesc, fmt.Errorf("summing what workspaces store: %w", err))
		return
	}
	for _, u := range top {
		ch <- prometheus.MustNewConstMetric(workspaceStoredDesc, prometheus.GaugeValue, float64(u.Stored.LogBytes), u.WorkspaceID, "log")
		ch <- prometheus.MustNewConstMetric(workspaceStoredDesc, prometheus.GaugeValue, float64(u.Stored.OutputBytes), u.WorkspaceID, "output")
		if u.StorageQuota > 0 {
			ch <- prometheus.MustNewConstMetric(workspaceQuotaDesc, prometheus.GaugeValue, float64(u.StorageQuota), u.WorkspaceID)
		}
	}
}
