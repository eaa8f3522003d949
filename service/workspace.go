package service

import (
	"context"
	"regexp"
	"sync"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

// workspaceName is the shape of workspace names: they appear in URLs.
// workspaceName is compiled on first use: a counted repetition compiles to a
// large program, which every command would otherwise build at start.
var workspaceName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`) })

type CreateWorkspaceParams struct {
	Name string `json:"name" jsonschema:"lowercase letters, digits and hyphens, at most 63 characters"`
}

// CreateWorkspace creates a workspace (instance admins only).
func (s *Service) CreateWorkspace(ctx context.Context, a Actor, p CreateWorkspaceParams) (*skilld.Workspace, error) {
	if err := a.requireInstanceAdmin(); err != nil {
		return nil, err
	}
	if !workspaceName().MatchString(p.Name) {
		return nil, invalidField("name", "workspace name %q must be 1 to 63 lowercase letters, digits or hyphens, starting with a letter or digit", p.Name)
	}
	w, err := s.db.WorkspaceCreate(ctx, &store.WorkspaceCreateParams{Name: p.Name})
	if err != nil {
		return nil, err
	}
	s.event(ctx, a, w.ID, "workspace.created", w.ID)
	return w, nil
}

type ListWorkspacesParams struct {
	Page
}

// WorkspaceList is one page of workspaces.
type WorkspaceList struct {
	Items []*skilld.Workspace `json:"items"`
}

// ListWorkspaces lists every workspace for instance admins, and the
// token's own workspace for everyone else.
func (s *Service) ListWorkspaces(ctx context.Context, a Actor, p ListWorkspacesParams) (*WorkspaceList, error) {
	if !a.InstanceAdmin {
		w, err := s.db.WorkspaceGet(ctx, &store.WorkspaceGetParams{ID: a.WorkspaceID})
		if err != nil {
			return nil, err
		}
		return &WorkspaceList{Items: []*skilld.Workspace{w}}, nil
	}
	pg, _, err := p.normalize()
	if err != nil {
		return nil, err
	}
	ws, err := s.db.WorkspaceList(ctx, &store.WorkspaceListParams{Page: pg})
	if err != nil {
		return nil, err
	}
	if ws == nil {
		ws = []*skilld.Workspace{}
	}
	return &WorkspaceList{Items: ws}, nil
}

type UpdateWorkspaceParams struct {
	// TaskRetention replaces the workspace's retention when given: a Go
	// duration, "0" to keep finished tasks forever, "" for the server's.
	TaskRetention   *string `json:"task_retention,omitempty" jsonschema:"how long the workspace keeps finished tasks, such as 720h; 0 keeps them forever, an empty string returns to the server's --task-retention"`
	MaxRunningTasks *int    `json:"max_running_tasks,omitempty" jsonschema:"the most tasks of the workspace that run at once, its others waiting (0: no cap of its own; -1: the server's --workspace-max-running again)"`
	MaxQueuedTasks  *int    `json:"max_queued_tasks,omitempty" jsonschema:"the most tasks of the workspace that wait to start; more are refused with 429 (0: no cap of its own; -1: the server's --workspace-max-queued again)"`
	LenientLengths  *bool   `json:"lenient_lengths,omitempty" jsonschema:"store skills whose description or compatibility is over the specification's length limit, with a warning, instead of refusing them"`
	StorageQuota    *int64  `json:"storage_quota,omitempty" jsonschema:"the most bytes the workspace's tasks may keep (logs and large tool outputs); at it, starts are refused with 507 (0: no quota of its own; -1: the server's --workspace-storage-quota again)"`
}

// UpdateWorkspace changes a workspace's settings (instance admins only:
// how long tasks are kept and how many may run or wait are the
// operator's call, like the server flags they override). Fields left out
// stay as they are.
func (s *Service) UpdateWorkspace(ctx context.Context, a Actor, p UpdateWorkspaceParams) (*skilld.Workspace, error) {
	if err := a.requireInstanceAdmin(); err != nil {
		return nil, err
	}
	if p.TaskRetention != nil && *p.TaskRetention != "" {
		if _, err := parseTaskRetention(*p.TaskRetention); err != nil {
			return nil, invalidField("task_retention", "%s", skilld.ErrorMessage(err))
		}
	}
	for _, f := range []struct {
		name string
		v    *int
	}{{"max_running_tasks", p.MaxRunningTasks}, {"max_queued_tasks", p.MaxQueuedTasks}} {
		if f.v != nil && (*f.v < -1 || *f.v > MaxTaskLimit) {
			return nil, invalidField(f.name, "%s must be from 0 to %d (0: no cap), or -1 for the server's default, not %d", f.name, MaxTaskLimit, *f.v)
		}
	}
	if p.StorageQuota != nil && *p.StorageQuota < -1 {
		return nil, invalidField("storage_quota", "storage_quota must be a number of bytes (0: no quota), or -1 for the server's default, not %d", *p.StorageQuota)
	}
	w, err := s.db.WorkspaceUpdate(ctx, &store.WorkspaceUpdateParams{ID: a.WorkspaceID, TaskRetention: p.TaskRetention,
		MaxRunningTasks: p.MaxRunningTasks, MaxQueuedTasks: p.MaxQueuedTasks, StorageQuota: p.StorageQuota, LenientLengths: p.LenientLengths})
	if err != nil {
		return nil, err
	}
	// Cached by ID and by name: both must read the new settings at once.
	s.auth.workspaces.drop(func(c skilld.Workspace) bool { return c.ID == w.ID })
	s.stored.forget(w.ID)
	s.event(ctx, a, w.ID, "workspace.updated", w.ID)
	if lw, ok := s.exec.(LimitWatcher); ok {
		lw.LimitsChanged(w.ID, s.limitsOf(w))
	}
	return w, nil
}

// findWorkspace resolves a workspace by ID, then by name.
func (s *Service) findWorkspace(ctx context.Context, ref string) (*skilld.Workspace, error) {
	// Workspaces are never renamed or deleted (their settings are not
	// read from here), so a cached one is only as old as AuthCacheTTL
	// allows; one not found is not cached, so a
	// new workspace is there at once.
	now := s.cfg.Now()
	if w, ok := s.auth.workspaces.get(ref, now); ok {
		return &w, nil
	}
	w, err := s.db.WorkspaceGet(ctx, &store.WorkspaceGetParams{ID: ref})
	if skilld.ErrorCode(err) == skilld.ENOTFOUND {
		w, err = s.db.WorkspaceGet(ctx, &store.WorkspaceGetParams{Name: ref})
	}
	if err == nil {
		s.auth.workspaces.put(ref, *w, now)
	}
	return w, err
}
