package service

import (
	"context"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

// TaskRecords is what an executor may read and write of the tasks it
// runs: their rows, their logs and their large outputs, and the list of
// workspaces to look for unfinished tasks in after a restart. Skills,
// agents, policies and tokens are not in it: an executor changes those
// only through the service's operations. A store.Store is one.
type TaskRecords interface {
	WorkspaceList(ctx context.Context, p *store.WorkspaceListParams) ([]*skilld.Workspace, error)
	TaskGet(ctx context.Context, p *store.TaskGetParams) (*skilld.Task, error)
	TaskList(ctx context.Context, p *store.TaskListParams) ([]*skilld.Task, int, error)
	TaskUpdate(ctx context.Context, p *store.TaskUpdateParams) (*skilld.Task, error)
	TaskLogAppend(ctx context.Context, p *store.TaskLogAppendParams) (*skilld.TaskLogEntry, error)
	TaskLogAppendBatch(ctx context.Context, p *store.TaskLogAppendBatchParams) ([]*skilld.TaskLogEntry, error)
	TaskLogList(ctx context.Context, p *store.TaskLogListParams) ([]*skilld.TaskLogEntry, error)
	TaskOutputAdd(ctx context.Context, p *store.TaskOutputParams) error
	TaskOutputExists(ctx context.Context, p *store.TaskOutputParams) (bool, error)
}

var _ TaskRecords = store.Store(nil)
