package service

import (
	"cmp"
	"context"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

// TaskActor is who a task's toolsets act as: the actor that started it, in
// the task's workspace, with the role it had then. A task started with a
// token that has since been revoked or has expired gets no actor — an
// agent must not keep powers its starter lost — and neither does a task
// whose snapshot predates starters.
func (s *Service) TaskActor(ctx context.Context, t *skilld.Task, snap *Snapshot) (Actor, error) {
	st := snap.Starter
	if st == nil {
		return Actor{}, skilld.Errorf(skilld.EFORBIDDEN, "task %s records no starter, so its toolsets cannot act for anyone; start the task again", t.ID)
	}
	if st.TokenID != "" {
		active, err := s.tokenActive(ctx, cmp.Or(st.TokenWorkspaceID, t.WorkspaceID), st.TokenID)
		if err != nil {
			return Actor{}, err
		}
		if !active {
			return Actor{}, skilld.Errorf(skilld.EFORBIDDEN, "the token that started task %s (%s) is revoked or expired, so its toolsets cannot act for it", t.ID, st.Name)
		}
	}
	return Actor{WorkspaceID: t.WorkspaceID, Role: st.Role, InstanceAdmin: st.InstanceAdmin, Name: st.Name, TokenID: st.TokenID,
		tokenWorkspace: cmp.Or(st.TokenWorkspaceID, t.WorkspaceID)}, nil
}

// tokenActive reports whether the workspace's token id is active now.
func (s *Service) tokenActive(ctx context.Context, workspaceID, id string) (bool, error) {
	for off := 0; ; off += store.MaxPageSize {
		toks, err := s.db.TokenList(ctx, &store.TokenListParams{WorkspaceID: workspaceID, Page: store.Page{Limit: store.MaxPageSize, Offset: off}})
		if err != nil {
			return false, err
		}
		for _, tok := range toks {
			if tok.ID == id {
				return tok.Active(s.cfg.Now()), nil
			}
		}
		if len(toks) < store.MaxPageSize {
			return false, nil
		}
	}
}
