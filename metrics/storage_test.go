package metrics_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/skilld/skilld/metrics"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/storetest"
)

// TestStorageSeries: with fifteen workspaces keeping task logs of
// different sizes, skilld_workspace_stored_bytes has the TopWorkspaces
// that keep the most, each with the bytes of its tasks' logs, and a
// workspace's own quota beside it.
func TestStorageSeries(t *testing.T) {
	db := storetest.OpenSQLite(t)
	want := map[string]float64{}
	var biggest string
	for w := range 15 {
		ws, err := db.WorkspaceCreate(t.Context(), &store.WorkspaceCreateParams{Name: fmt.Sprint("ws-", w)})
		if err != nil {
			t.Fatal(err)
		}
		task, err := db.TaskCreate(t.Context(), &store.TaskCreateParams{WorkspaceID: ws.ID, Input: "x"})
		if err != nil {
			t.Fatal(err)
		}
		payload := json.RawMessage(`{"text":"` + strings.Repeat("z", 100*(w+1)) + `"}`)
		if _, err := db.TaskLogAppend(t.Context(), &store.TaskLogAppendParams{TaskID: task.ID, Kind: "event", Payload: payload}); err != nil {
			t.Fatal(err)
		}
		want[ws.ID], biggest = float64(len(payload)), ws.ID
	}
	quota := int64(1 << 20)
	if _, err := db.WorkspaceUpdate(t.Context(), &store.WorkspaceUpdateParams{ID: biggest, StorageQuota: &quota}); err != nil {
		t.Fatal(err)
	}
	m := metrics.New(metrics.Config{Storage: metrics.StoreStorage(db)})
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	logs, quotas := map[string]float64{}, map[string]float64{}
	for _, f := range fams {
		for _, mt := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range mt.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			switch {
			case f.GetName() == "skilld_workspace_stored_bytes" && labels["kind"] == "log":
				logs[labels["workspace"]] = mt.GetGauge().GetValue()
			case f.GetName() == "skilld_workspace_storage_quota_bytes":
				quotas[labels["workspace"]] = mt.GetGauge().GetValue()
			}
		}
	}
	if len(logs) != metrics.TopWorkspaces {
		t.Fatalf("%d workspaces have a series, want %d: %v", len(logs), metrics.TopWorkspaces, logs)
	}
	for ws, got := range logs {
		if got != want[ws] || got < want[biggest]-1000 {
			t.Errorf("workspace %s: %v log bytes, want %v (and one of the ten biggest)", ws, got, want[ws])
		}
	}
	if len(quotas) != 1 || quotas[biggest] != float64(quota) {
		t.Errorf("quotas %v, want only %s's", quotas, biggest)
	}
}
