package store

import (
	"context"
	"encoding/json"

	"github.com/skilld/skilld"
)

// EventQueries persist the workspace audit trail.
type EventQueries interface {
	EventAppend(ctx context.Context, p *EventAppendParams) (*skilld.Event, error)
	// EventList returns a workspace's events with ID > AfterID, oldest first.
	EventList(ctx context.Context, p *EventListParams) ([]*skilld.Event, error)
}

type EventAppendParams struct {
	WorkspaceID string
	Kind        string
	Subject     string
	Actor       string
	Payload     json.RawMessage
}

type EventListParams struct {
	WorkspaceID string
	AfterID     int64
	Limit       int
}
