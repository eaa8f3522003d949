package sqldb

import (
	"context"
	"encoding/json"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

const eventColumns = `id, workspace_id, kind, subject, actor, payload, created_at`

func scanEvent(r Row) (*skilld.Event, error) {
	var e skilld.Event
	var payload string
	if err := r.Scan(&e.ID, &e.WorkspaceID, &e.Kind, &e.Subject, &e.Actor, &payload, &e.CreatedAt); err != nil {
		return nil, err
	}
	e.Payload = json.RawMessage(payload)
	e.CreatedAt = utc(e.CreatedAt)
	return &e, nil
}

func (q *Queries) EventAppend(ctx context.Context, p *store.EventAppendParams) (*skilld.Event, error) {
	e, err := scanEvent(q.c.ExecRow(ctx, `INSERT INTO events (workspace_id, kind, subject, actor, payload, created_at)
		VALUES (?, ?, ?, ?, ?, ?) RETURNING `+eventColumns, p.WorkspaceID, p.Kind, p.Subject, p.Actor, jsonText(p.Payload), now()))
	return e, internal(err, "recording event %q", p.Kind)
}

func (q *Queries) EventList(ctx context.Context, p *store.EventListParams) ([]*skilld.Event, error) {
	rows, err := q.c.Query(ctx, `SELECT `+eventColumns+` FROM events WHERE workspace_id = ? AND id > ? ORDER BY id LIMIT ?`,
		p.WorkspaceID, p.AfterID, store.Page{Limit: p.Limit}.Normalize().Limit)
	es, err := collect(rows, err, scanEvent)
	return es, internal(err, "listing events")
}
