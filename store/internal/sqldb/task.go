package sqldb

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

const taskColumns = `id, workspace_id, COALESCE(agent_id, ''), input, status, config, output, error, error_code,
	prompt_tokens, completion_tokens, log_bytes, output_bytes, last_seq, created_by, created_at, updated_at, started_at, finished_at`

func scanTask(r Row) (*skilld.Task, error) {
	var t skilld.Task
	var config, msg, code string
	if err := r.Scan(&t.ID, &t.WorkspaceID, &t.AgentID, &t.Input, &t.Status, &config, &t.Output, &msg, &code,
		&t.Usage.PromptTokens, &t.Usage.CompletionTokens, &t.Stored.LogBytes, &t.Stored.OutputBytes, &t.LastSeq, &t.CreatedBy,
		&t.CreatedAt, &t.UpdatedAt, &t.StartedAt, &t.FinishedAt); err != nil {
		return nil, err
	}
	t.Config = json.RawMessage(config)
	if msg != "" || code != "" {
		t.Error = &skilld.TaskError{Code: code, Message: msg}
	}
	t.Usage.TotalTokens = t.Usage.PromptTokens + t.Usage.CompletionTokens
	t.CreatedAt, t.UpdatedAt = utc(t.CreatedAt), utc(t.UpdatedAt)
	t.StartedAt, t.FinishedAt = utcp(t.StartedAt), utcp(t.FinishedAt)
	return &t, nil
}

// jsonText returns raw JSON as text for storage, "{}" when empty.
func jsonText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "{}"
	}
	return string(raw)
}

func (q *Queries) TaskCreate(ctx context.Context, p *store.TaskCreateParams) (*skilld.Task, error) {
	status := p.Status
	if status == "" {
		status = skilld.TaskQueued
	}
	t := now()
	var task *skilld.Task
	err := q.tx(ctx, func(q *Queries) error {
		var err error
		task, err = scanTask(q.c.ExecRow(ctx, `INSERT INTO tasks (id, workspace_id, agent_id, input, status, config, created_by, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING `+taskColumns,
			newID(), p.WorkspaceID, nullString(p.AgentID), p.Input, status, jsonText(p.Config), p.CreatedBy, t, t))
		if err != nil {
			return internal(err, "creating task")
		}
		for _, d := range slices.Compact(slices.Sorted(slices.Values(p.Packages))) {
			_, err := q.c.Exec(ctx, `INSERT INTO task_packages (task_id, package_digest) VALUES (?, ?)`, task.ID, d)
			if constraint(err, "foreign_key") != nil {
				return &skilld.Error{Code: skilld.EINVALID, Message: "package " + d + " no longer exists", Err: err}
			}
			if err != nil {
				return internal(err, "pinning package %s for task %s", d, task.ID)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return task, nil
}

func (q *Queries) TaskPackagesRelease(ctx context.Context, p *store.TaskPackagesReleaseParams) ([]string, error) {
	var out []string
	err := q.tx(ctx, func(q *Queries) error {
		rows, err := q.c.Query(ctx, `SELECT package_digest FROM task_packages WHERE task_id = ?`, p.TaskID)
		if out, err = collect(rows, err, scanValue[string]); err != nil {
			return err
		}
		_, err = q.c.Exec(ctx, `DELETE FROM task_packages WHERE task_id = ?`, p.TaskID)
		return err
	})
	return out, internal(err, "releasing the packages of task %s", p.TaskID)
}

func (q *Queries) TaskGet(ctx context.Context, p *store.TaskGetParams) (*skilld.Task, error) {
	if p.WorkspaceID == "" {
		t, err := scanTask(q.c.QueryRow(ctx, `SELECT `+taskColumns+` FROM tasks WHERE id = ?`, p.ID))
		return t, notFound(err, "task %q", p.ID)
	}
	t, err := scanTask(q.c.QueryRow(ctx, `SELECT `+taskColumns+` FROM tasks WHERE id = ? AND workspace_id = ?`, p.ID, p.WorkspaceID))
	return t, notFound(err, "task %q", p.ID)
}

func (q *Queries) TaskList(ctx context.Context, p *store.TaskListParams) ([]*skilld.Task, int, error) {
	pg := p.Page.Normalize()
	where, args := []string{"workspace_id = ?"}, []any{p.WorkspaceID}
	if p.AgentID != "" {
		where, args = append(where, "agent_id = ?"), append(args, p.AgentID)
	}
	if p.Status != "" {
		where, args = append(where, "status = ?"), append(args, p.Status)
	}
	cond := strings.Join(where, " AND ")
	var total int
	if err := q.c.QueryRow(ctx, `SELECT COUNT(*) FROM tasks WHERE `+cond, args...).Scan(&total); err != nil {
		return nil, 0, internal(err, "counting tasks")
	}
	if pg.After != "" {
		cond, args, pg.Offset = cond+" AND id < ?", append(args, pg.After), 0
	}
	rows, err := q.c.Query(ctx, `SELECT `+taskColumns+` FROM tasks WHERE `+cond+` ORDER BY id DESC LIMIT ? OFFSET ?`,
		append(args, pg.Limit, pg.Offset)...)
	tasks, err := collect(rows, err, scanTask)
	return tasks, total, internal(err, "listing tasks")
}

func (q *Queries) TaskUpdate(ctx context.Context, p *store.TaskUpdateParams) (*skilld.Task, error) {
	set, args := []string{"updated_at = ?"}, []any{now()}
	if p.Status != "" {
		set, args = append(set, "status = ?"), append(args, p.Status)
	}
	if p.Config != nil {
		set, args = append(set, "config = ?"), append(args, jsonText(p.Config))
	}
	if p.Output != nil {
		set, args = append(set, "output = ?"), append(args, *p.Output)
	}
	if p.Error != nil {
		set, args = append(set, "error = ?"), append(args, *p.Error)
	}
	if p.ErrorCode != nil {
		set, args = append(set, "error_code = ?"), append(args, *p.ErrorCode)
	}
	if p.StartedAt != nil {
		set, args = append(set, "started_at = ?"), append(args, p.StartedAt.UTC())
	}
	if p.FinishedAt != nil {
		set, args = append(set, "finished_at = ?"), append(args, p.FinishedAt.UTC())
	}
	sql := `UPDATE tasks SET ` + strings.Join(set, ", ") + ` WHERE id = ?`
	args = append(args, p.ID)
	if p.ExpectedStatus != "" {
		sql += ` AND status = ?`
		args = append(args, p.ExpectedStatus)
	}
	t, err := scanTask(q.c.ExecRow(ctx, sql+` RETURNING `+taskColumns, args...))
	if isNoRows(err) && p.ExpectedStatus != "" {
		cur, gerr := q.TaskGet(ctx, &store.TaskGetParams{ID: p.ID})
		if gerr != nil {
			return nil, gerr
		}
		return nil, &skilld.Error{Code: skilld.ECONFLICT,
			Message: "task " + quote(p.ID) + " is " + string(cur.Status) + ", not " + string(p.ExpectedStatus)}
	}
	return t, notFound(err, "task %q", p.ID)
}

const taskLogColumns = `task_id, seq, kind, payload, created_at`

func scanTaskLog(r Row) (*skilld.TaskLogEntry, error) {
	var e skilld.TaskLogEntry
	var payload string
	if err := r.Scan(&e.TaskID, &e.Seq, &e.Kind, &payload, &e.CreatedAt); err != nil {
		return nil, err
	}
	e.Payload = json.RawMessage(payload)
	e.CreatedAt = utc(e.CreatedAt)
	return &e, nil
}

// TaskLogAppend appends one entry: a batch of one.
func (q *Queries) TaskLogAppend(ctx context.Context, p *store.TaskLogAppendParams) (*skilld.TaskLogEntry, error) {
	es, err := q.TaskLogAppendBatch(ctx, &store.TaskLogAppendBatchParams{TaskID: p.TaskID, ExpectSeq: p.ExpectSeq,
		Entries: []store.TaskLogBatchEntry{{Kind: p.Kind, Payload: p.Payload, PromptTokens: p.PromptTokens, CompletionTokens: p.CompletionTokens}}})
	if err != nil {
		return nil, err
	}
	return es[0], nil
}

// TaskLogAppendBatch takes the next numbers from the task row in the same
// transaction as the insert: the row update serializes appenders of one
// task, and a rollback returns the numbers, so there are never gaps. The
// same update adds the entries' usage and bytes, so the totals move with
// the log. One update and one insert, whatever the batch's size: the
// statements, not the rows, are what a transaction costs.
func (q *Queries) TaskLogAppendBatch(ctx context.Context, p *store.TaskLogAppendBatchParams) ([]*skilld.TaskLogEntry, error) {
	if len(p.Entries) == 0 {
		return nil, &skilld.Error{Code: skilld.EINVALID, Message: fmt.Sprintf("a batch of log entries of task %s has no entries", p.TaskID)}
	}
	var prompt, completion, size int64
	payloads := make([]string, len(p.Entries))
	for i, e := range p.Entries {
		if e.PromptTokens < 0 || e.CompletionTokens < 0 {
			return nil, &skilld.Error{Code: skilld.EINVALID, Message: fmt.Sprintf("a log entry of task %s has negative usage (%d prompt, %d completion tokens)", p.TaskID, e.PromptTokens, e.CompletionTokens)}
		}
		payloads[i] = jsonText(e.Payload)
		prompt, completion, size = prompt+e.PromptTokens, completion+e.CompletionTokens, size+int64(len(payloads[i]))
	}
	n := int64(len(p.Entries))
	var out []*skilld.TaskLogEntry
	err := q.tx(ctx, func(q *Queries) error {
		t := now()
		var last int64
		err := q.c.ExecRow(ctx, `UPDATE tasks SET last_seq = last_seq + ?, updated_at = ?, prompt_tokens = prompt_tokens + ?, completion_tokens = completion_tokens + ?,
			log_bytes = log_bytes + ? WHERE id = ? AND (? = 0 OR last_seq = ? - 1) RETURNING last_seq`,
			n, t, prompt, completion, size, p.TaskID, p.ExpectSeq, p.ExpectSeq).Scan(&last)
		if isNoRows(err) && p.ExpectSeq > 0 {
			var at int64
			if q.c.QueryRow(ctx, `SELECT last_seq FROM tasks WHERE id = ?`, p.TaskID).Scan(&at) == nil {
				return &skilld.Error{Code: skilld.ECONFLICT, Err: store.ErrLogMoved,
					Message: fmt.Sprintf("the log of task %s is at entry %d, not %d: another run of the task is writing it", p.TaskID, at, p.ExpectSeq-1)}
			}
		}
		if err != nil {
			return notFound(err, "task %q", p.TaskID)
		}
		args := make([]any, 0, 5*n)
		out = make([]*skilld.TaskLogEntry, n)
		for i, e := range p.Entries {
			out[i] = &skilld.TaskLogEntry{TaskID: p.TaskID, Seq: last - n + 1 + int64(i), Kind: e.Kind, Payload: json.RawMessage(payloads[i]), CreatedAt: t}
			args = append(args, p.TaskID, out[i].Seq, e.Kind, payloads[i], t)
		}
		values := strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?), ", len(p.Entries)), ", ")
		_, err = q.c.Exec(ctx, `INSERT INTO task_log (task_id, seq, kind, payload, created_at) VALUES `+values, args...)
		return internal(err, "appending to the log of task %q", p.TaskID)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (q *Queries) TaskLogList(ctx context.Context, p *store.TaskLogListParams) ([]*skilld.TaskLogEntry, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = store.MaxPageSize
	}
	rows, err := q.c.Query(ctx, `SELECT `+taskLogColumns+` FROM task_log WHERE task_id = ? AND seq > ? ORDER BY seq LIMIT ?`,
		p.TaskID, p.AfterSeq, limit)
	es, err := collect(rows, err, scanTaskLog)
	return es, internal(err, "reading the log of task %q", p.TaskID)
}

// TaskOutputAdd takes the blob guard shared, as a package commit does: a
// cleanup deleting unreferenced blobs (a deleted task's outputs, fsck
// --repair) holds it exclusively, so the reference either commits before
// the cleanup looks, or after it is done, when the writer can see its blob
// gone and store it again.
func (q *Queries) TaskOutputAdd(ctx context.Context, p *store.TaskOutputParams) error {
	return q.tx(ctx, func(q *Queries) error {
		if _, err := q.BlobGuard(ctx, &store.BlobGuardParams{}); err != nil {
			return err
		}
		if p.Size < 0 {
			return &skilld.Error{Code: skilld.EINVALID, Message: fmt.Sprintf("an output of task %s has a negative size (%d)", p.TaskID, p.Size)}
		}
		n, err := q.c.Exec(ctx, `INSERT INTO task_outputs (task_id, digest, size) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`, p.TaskID, p.Digest, p.Size)
		if constraint(err, "foreign_key") != nil {
			return &skilld.Error{Code: skilld.ENOTFOUND, Message: "task " + p.TaskID + " not found", Err: err}
		}
		if err == nil && n > 0 {
			_, err = q.c.Exec(ctx, `UPDATE tasks SET output_bytes = output_bytes + ? WHERE id = ?`, p.Size, p.TaskID)
		}
		return internal(err, "recording an output of task %s", p.TaskID)
	})
}

func (q *Queries) TaskOutputExists(ctx context.Context, p *store.TaskOutputParams) (bool, error) {
	var n int
	err := q.c.QueryRow(ctx, `SELECT COUNT(*) FROM task_outputs WHERE task_id = ? AND digest = ?`, p.TaskID, p.Digest).Scan(&n)
	return n > 0, internal(err, "looking up an output of task %s", p.TaskID)
}

func (q *Queries) TaskCountByStatus(ctx context.Context) (map[skilld.TaskStatus]int, error) {
	rows, err := q.c.Query(ctx, `SELECT status, COUNT(*) FROM tasks GROUP BY status`)
	type count struct {
		status skilld.TaskStatus
		n      int
	}
	counts, err := collect(rows, err, func(r Row) (count, error) {
		var c count
		return c, r.Scan(&c.status, &c.n)
	})
	if err != nil {
		return nil, internal(err, "counting tasks by status")
	}
	out := make(map[skilld.TaskStatus]int, len(counts))
	for _, c := range counts {
		out[c.status] = c.n
	}
	return out, nil
}

// doneStatuses are the statuses of finished tasks (skilld.TaskStatus.Done).
var doneStatuses = []any{skilld.TaskCompleted, skilld.TaskFailed, skilld.TaskCancelled}

// TaskDelete locks the task's row first, so that its status cannot change
// and no output can be added (the foreign key check waits for the lock)
// between reading what it refers to and deleting it; the log, outputs and
// package pins go with the row (ON DELETE CASCADE).
func (q *Queries) TaskDelete(ctx context.Context, p *store.TaskDeleteParams) (*store.TaskDeleteResult, error) {
	res := &store.TaskDeleteResult{}
	err := q.tx(ctx, func(q *Queries) error {
		cond, args := `id = ?`, []any{p.ID}
		if p.WorkspaceID != "" {
			cond, args = cond+` AND workspace_id = ?`, append(args, p.WorkspaceID)
		}
		var status skilld.TaskStatus
		if err := q.c.QueryRow(ctx, `SELECT status FROM tasks WHERE `+cond+` `+q.d.LockUpdate, args...).Scan(&status); err != nil {
			return notFound(err, "task %q", p.ID)
		}
		if !status.Done() {
			return &skilld.Error{Code: skilld.ECONFLICT, Err: store.ErrTaskNotFinished,
				Message: fmt.Sprintf("task %s is %s, not finished: cancel it first", p.ID, status)}
		}
		rows, err := q.c.Query(ctx, `SELECT digest FROM task_outputs WHERE task_id = ? ORDER BY digest`, p.ID)
		if res.Outputs, err = collect(rows, err, scanValue[string]); err != nil {
			return internal(err, "reading the outputs of task %s", p.ID)
		}
		rows, err = q.c.Query(ctx, `SELECT package_digest FROM task_packages WHERE task_id = ? ORDER BY package_digest`, p.ID)
		if res.Packages, err = collect(rows, err, scanValue[string]); err != nil {
			return internal(err, "reading the packages of task %s", p.ID)
		}
		_, err = q.c.Exec(ctx, `DELETE FROM tasks WHERE id = ?`, p.ID)
		return internal(err, "deleting task %s", p.ID)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

func (q *Queries) TaskListFinished(ctx context.Context, p *store.TaskListFinishedParams) ([]string, error) {
	limit := p.Limit
	if limit <= 0 || limit > store.MaxPageSize {
		limit = store.MaxPageSize
	}
	args := append([]any{p.WorkspaceID, p.Before.UTC()}, doneStatuses...)
	rows, err := q.c.Query(ctx, `SELECT id FROM tasks WHERE workspace_id = ? AND finished_at < ? AND status IN (`+placeholders(len(doneStatuses))+`)
		ORDER BY finished_at LIMIT ?`, append(args, limit)...)
	ids, err := collect(rows, err, scanValue[string])
	return ids, internal(err, "listing the finished tasks of workspace %q", p.WorkspaceID)
}
