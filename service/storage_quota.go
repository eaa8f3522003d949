package service

import (
	"context"
	"fmt"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/internal/units"
	"github.com/skilld/skilld/store"
)

// DefaultStorageQuota is skilld serve's default bound on the bytes one
// workspace's tasks keep (--workspace-storage-quota): their logs and large
// tool outputs. Ten GiB is forty tasks that each spent the whole default
// output budget, far more than a team's ordinary use, and still a
// fraction of a small server's disk, so one tenant's loop of noisy tasks
// is stopped long before it fills the disk the others share.
const DefaultStorageQuota = 10 << 30

// Quota sources, the WorkspaceUsage.QuotaSource of each case.
const (
	QuotaFromServer    = "server"
	QuotaFromWorkspace = "workspace"
)

// storageQuota is the bound that holds for a workspace, and where it
// comes from.
func (s *Service) storageQuota(w *skilld.Workspace) (int64, string) {
	if w.StorageQuota != nil {
		return *w.StorageQuota, QuotaFromWorkspace
	}
	return s.cfg.StorageQuota, QuotaFromServer
}

// checkStorage refuses a new task of a workspace whose tasks keep as much
// as its quota allows. What they keep is read at most every AuthCacheTTL
// (a sum over the workspace's task rows), so a burst of starts may pass
// the quota by what its tasks store meanwhile; each task is still held to
// its own output budget.
func (s *Service) checkStorage(ctx context.Context, w *skilld.Workspace) error {
	quota, source := s.storageQuota(w)
	if quota <= 0 {
		return nil
	}
	now := s.cfg.Now()
	used, ok := s.stored.get(w.ID, now)
	if !ok {
		u, err := s.db.WorkspaceUsage(ctx, &store.WorkspaceUsageParams{ID: w.ID})
		if err != nil {
			return fmt.Errorf("reading what workspace %q stores: %w", w.Name, err)
		}
		used = u.StoredBytes
		s.stored.put(w.ID, used, now)
	}
	if used < quota {
		return nil
	}
	from := "the server's --workspace-storage-quota"
	if source == QuotaFromWorkspace {
		from = "the workspace's own storage_quota"
	}
	return skilld.Errorf(skilld.EQUOTA, "workspace %q keeps %s of task logs and outputs, its quota is %s (%s): no task may start until some are deleted "+
		"(DELETE /v1/workspaces/%s/tasks/{id}, or a shorter task_retention) or an instance admin raises the quota (PATCH /v1/workspaces/%s {\"storage_quota\": BYTES})",
		w.Name, units.Bytes(used), units.Bytes(quota), from, w.Name, w.Name)
}

type WorkspaceUsageParams struct{}

// WorkspaceUsage reports what a workspace keeps and runs (any member):
// its tasks by status, the bytes they keep against its storage quota, and
// its skills.
func (s *Service) WorkspaceUsage(ctx context.Context, a Actor, _ WorkspaceUsageParams) (*skilld.WorkspaceUsage, error) {
	if err := a.can(skilld.RoleViewer); err != nil {
		return nil, err
	}
	w, err := s.findWorkspace(ctx, a.WorkspaceID)
	if err != nil {
		return nil, err
	}
	u, err := s.db.WorkspaceUsage(ctx, &store.WorkspaceUsageParams{ID: w.ID})
	if err != nil {
		return nil, err
	}
	u.StorageQuota, u.QuotaSource = s.storageQuota(w)
	s.stored.put(w.ID, u.StoredBytes, s.cfg.Now())
	return u, nil
}
