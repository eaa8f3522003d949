package service

import (
	"context"
	"errors"

	"github.com/skilld/skilld/blob"
	"github.com/skilld/skilld/store"
)

// Health is what Ping found of each backend: nil when it answered.
type Health struct {
	DB    error
	Blobs error
}

// Err joins the backends' errors (nil when all answered).
func (h Health) Err() error { return errors.Join(h.DB, h.Blobs) }

// anyDigest is a digest no blob has: a blob store that answers "not found"
// for it is reachable.
const anyDigest = "sha256:0000000000000000000000000000000000000000000000000000000000000000"

// Ping asks the metadata and blob stores for something cheap, within
// ctx's deadline, and reports which did not answer.
func (s *Service) Ping(ctx context.Context) Health {
	var h Health
	if _, err := s.db.WorkspaceList(ctx, &store.WorkspaceListParams{Page: store.Page{Limit: 1}}); err != nil {
		h.DB = err
	}
	if _, err := s.blobs.Stat(ctx, anyDigest); err != nil && !errors.Is(err, blob.ErrNotFound) {
		h.Blobs = err
	}
	return h
}
