package sqldb

import (
	"context"
	"errors"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

const workspaceColumns = `id, name, task_retention, created_at, max_running_tasks, max_queued_tasks`

func scanWorkspace(r Row) (*skilld.Workspace, error) {
	var w skilld.Workspace
	if err := r.Scan(&w.ID, &w.Name, &w.TaskRetention, &w.CreatedAt, &w.MaxRunningTasks, &w.MaxQueuedTasks); err != nil {
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
