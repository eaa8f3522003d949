package sqldb

import (
	"context"
	"errors"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

const workspaceColumns = `id, name, task_retention, created_at, max_running_tasks, max_queued_tasks, storage_quota, lenient_lengths`

func scanWorkspace(r Row) (*skilld.Workspace, error) {
	var w skilld.Workspace
	if err := r.Scan(&w.ID, &w.Name, &w.TaskRetention, &w.CreatedAt, &w.MaxRunningTasks, &w.MaxQueuedTasks, &w.StorageQuota, &w.LenientLengths); err != nil {
		return nil, err
	}
	w.CreatedAt = utc(w.CreatedAt)
	return &w, nil
}

func (q *Queries) WorkspaceCreate(ctx context.Context, p *store.WorkspaceCreateParams) (*skilld.Workspace, error) {
	w, err := scanWorkspace(q.c.ExecRow(ctx,
		`INSERT INTO workspaces (id, name, created_at) VALUES (?, ?, ?) RETURNING `+workspaceColumns,
		newID(), p.Name, now()))
	if err := conflict(err, "workspace "+quote(p.Name)+" already exists", "name"); err != nil {
		return nil, err
	}
	return w, internal(err, "creating workspace %q", p.Name)
}

func (q *Queries) WorkspaceGet(ctx context.Context, p *store.WorkspaceGetParams) (*skilld.Workspace, error) {
	if p.ID != "" {
		w, err := scanWorkspace(q.c.QueryRow(ctx, `SELECT `+workspaceColumns+` FROM workspaces WHERE id = ?`, p.ID))
		return w, notFound(err, "workspace %q", p.ID)
	}
	w, err := scanWorkspace(q.c.QueryRow(ctx, `SELECT `+workspaceColumns+` FROM workspaces WHERE name = ?`, p.Name))
	return w, notFound(err, "workspace %q", p.Name)
}

func (q *Queries) WorkspaceList(ctx context.Context, p *store.WorkspaceListParams) ([]*skilld.Workspace, error) {
	pg := p.Page.Normalize()
	rows, err := q.c.Query(ctx, `SELECT `+workspaceColumns+` FROM workspaces ORDER BY name LIMIT ? OFFSET ?`, pg.Limit, pg.Offset)
	ws, err := collect(rows, err, scanWorkspace)
	return ws, internal(err, "listing workspaces")
}

func (q *Queries) WorkspaceUpdate(ctx context.Context, p *store.WorkspaceUpdateParams) (*skilld.Workspace, error) {
	var set []string
	var args []any
	if p.TaskRetention != nil {
		set, args = append(set, "task_retention = ?"), append(args, *p.TaskRetention)
	}
	for _, c := range []struct {
		col string
		v   *int
	}{{"max_running_tasks", p.MaxRunningTasks}, {"max_queued_tasks", p.MaxQueuedTasks}} {
		if c.v != nil {
			set, args = append(set, c.col+" = ?"), append(args, nullCap(*c.v))
		}
	}
	if p.StorageQuota != nil {
		var quota any
		if *p.StorageQuota >= 0 {
			quota = *p.StorageQuota
		}
		set, args = append(set, "storage_quota = ?"), append(args, quota)
	}
	if p.LenientLengths != nil {
		set, args = append(set, "lenient_lengths = ?"), append(args, *p.LenientLengths)
	}
	if len(set) == 0 {
		return q.WorkspaceGet(ctx, &store.WorkspaceGetParams{ID: p.ID})
	}
	w, err := scanWorkspace(q.c.ExecRow(ctx, `UPDATE workspaces SET `+strings.Join(set, ", ")+` WHERE id = ? RETURNING `+workspaceColumns,
		append(args, p.ID)...))
	if errors.Is(err, ErrNoRows) {
		return nil, notFound(err, "workspace %q", p.ID)
	}
	return w, internal(err, "updating workspace %q", p.ID)
}

// nullCap stores a negative cap as NULL: none of the workspace's own.
func nullCap(n int) any {
	if n < 0 {
		return nil
	}
	return n
}

func (q *Queries) WorkspaceDelete(ctx context.Context, p *store.WorkspaceDeleteParams) error {
	n, err := q.c.Exec(ctx, `DELETE FROM workspaces WHERE id = ?`, p.ID)
	if err != nil {
		return internal(err, "deleting workspace %q", p.ID)
	}
	if n == 0 {
		return notFound(ErrNoRows, "workspace %q", p.ID)
	}
	return nil
}

// WorkspaceUsage reads the workspace's row, then its tasks' sums and
// counts through the index on (workspace_id, status): a read of its task
// rows, none of its logs.
func (q *Queries) WorkspaceUsage(ctx context.Context, p *store.WorkspaceUsageParams) (*skilld.WorkspaceUsage, error) {
	u := &skilld.WorkspaceUsage{WorkspaceID: p.ID, Tasks: map[skilld.TaskStatus]int{}}
	var quota *int64
	err := q.c.QueryRow(ctx, `SELECT name, skill_count, storage_quota FROM workspaces WHERE id = ?`, p.ID).Scan(&u.Workspace, &u.Skills, &quota)
	if err != nil {
		return nil, notFound(err, "workspace %q", p.ID)
	}
	if quota != nil {
		u.StorageQuota = *quota
	}
	rows, err := q.c.Query(ctx, `SELECT status, COUNT(*), COALESCE(SUM(log_bytes), 0), COALESCE(SUM(output_bytes), 0)
		FROM tasks WHERE workspace_id = ? GROUP BY status`, p.ID)
	type sums struct {
		status skilld.TaskStatus
		n      int
		stored skilld.TaskStorage
	}
	all, err := collect(rows, err, func(r Row) (sums, error) {
		var s sums
		return s, r.Scan(&s.status, &s.n, &s.stored.LogBytes, &s.stored.OutputBytes)
	})
	if err != nil {
		return nil, internal(err, "summing the tasks of workspace %q", p.ID)
	}
	for _, s := range all {
		u.Tasks[s.status] = s.n
		u.TasksTotal += s.n
		u.Stored.LogBytes += s.stored.LogBytes
		u.Stored.OutputBytes += s.stored.OutputBytes
	}
	u.StoredBytes = u.Stored.Total()
	return u, nil
}

func (q *Queries) WorkspaceStorageTop(ctx context.Context, p *store.WorkspaceStorageTopParams) ([]*skilld.WorkspaceUsage, error) {
	rows, err := q.c.Query(ctx, `SELECT w.id, w.name, w.skill_count, COALESCE(w.storage_quota, 0), t.logs, t.outputs, t.n
		FROM (SELECT workspace_id, SUM(log_bytes) AS logs, SUM(output_bytes) AS outputs, COUNT(*) AS n
			FROM tasks GROUP BY workspace_id ORDER BY SUM(log_bytes) + SUM(output_bytes) DESC, workspace_id LIMIT ?) t
		JOIN workspaces w ON w.id = t.workspace_id
		ORDER BY t.logs + t.outputs DESC, w.id`, max(p.Limit, 1))
	top, err := collect(rows, err, func(r Row) (*skilld.WorkspaceUsage, error) {
		var u skilld.WorkspaceUsage
		err := r.Scan(&u.WorkspaceID, &u.Workspace, &u.Skills, &u.StorageQuota, &u.Stored.LogBytes, &u.Stored.OutputBytes, &u.TasksTotal)
		u.StoredBytes = u.Stored.Total()
		return &u, err
	})
	return top, internal(err, "finding the workspaces that store the most")
}
