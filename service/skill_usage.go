package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/analytics"
	"github.com/skilld/skilld/store"
)

// How the skill usage indexer paces itself: the sweeper indexes at most
// UsageSweepBatch tasks a pass, a pass a minute; a query indexes at most
// UsageQueryBatch of its workspace's first, so that its answer counts
// the tasks that just finished without a query ever reading a backlog.
const (
	UsageSweepInterval = time.Minute
	UsageSweepBatch    = 500
	UsageQueryBatch    = 50
)

// IndexSkillUsage indexes at most limit finished tasks whose log moved
// past what was read of it (of workspace workspaceID, or of every
// workspace when it is ""): each task's log is read whole, what it did
// with each attached skill extracted (analytics.Extract) and its rows
// replaced in one transaction. A task another server indexed meanwhile
// is skipped. It returns how many tasks it indexed, and goes on past a
// failure, returning every failure with the count.
func (s *Service) IndexSkillUsage(ctx context.Context, workspaceID string, limit int) (int, error) {
	pending, err := s.db.SkillUsagePending(ctx, &store.SkillUsagePendingParams{WorkspaceID: workspaceID, Limit: limit})
	if err != nil {
		return 0, err
	}
	var (
		indexed int
		errs    []error
	)
	for _, p := range pending {
		if ctx.Err() != nil {
			break
		}
		outcome, rows, err := s.indexTask(ctx, p)
		switch code := skilld.ErrorCode(err); {
		case code == skilld.ENOTFOUND || errors.Is(err, store.ErrUsageMoved):
			continue // deleted, or indexed by another server
		case err != nil:
			errs = append(errs, fmt.Errorf("indexing the skill usage of task %s: %w", p.ID, err))
			continue
		}
		indexed++
		if s.cfg.UsageIndexed != nil {
			s.cfg.UsageIndexed(outcome, rows)
		}
	}
	return indexed, errors.Join(errs...)
}

// indexTask indexes one task, and returns its outcome and rows.
func (s *Service) indexTask(ctx context.Context, p store.SkillUsageTask) (string, []store.SkillUsage, error) {
	t, err := s.db.TaskGet(ctx, &store.TaskGetParams{ID: p.ID})
	if err != nil {
		return "", nil, err
	}
	// A snapshot that cannot be read names no skill: the task is indexed
	// with no rows, so that it is not read again at every pass (and does
	// not hold back the tasks after it), and the failure is reported once.
	snap, snapErr := TaskSnapshot(t)
	if snapErr != nil {
		snap, snapErr = &Snapshot{}, skilld.Errorf(skilld.EINTEGRITY, "%s", snapErr)
	}
	var entries []*skilld.TaskLogEntry
	for {
		page, err := s.db.TaskLogList(ctx, &store.TaskLogListParams{TaskID: t.ID, AfterSeq: lastSeq(entries), Limit: store.MaxPageSize})
		if err != nil {
			return "", nil, err
		}
		entries = append(entries, page...)
		if len(page) < store.MaxPageSize {
			break
		}
	}
	skills := make([]analytics.Skill, len(snap.Skills))
	for i, sk := range snap.Skills {
		skills[i] = analytics.Skill{Version: sk.Version, Skill: agent.Skill{ID: sk.ID, Name: sk.Name, Description: sk.Description, Digest: sk.Digest,
			Files: sk.Files, Withheld: sk.Withheld, NoModelInvocation: sk.NoModelInvocation, NoUserInvocation: sk.NoUserInvocation}}
	}
	// The task's status says how it ended even when its log does not (a
	// task cancelled before it ran, a run that was lost).
	outcome := string(t.Status)
	rows := make([]store.SkillUsage, 0, len(skills))
	seen := map[string]bool{}
	for _, u := range analytics.Extract(skills, entries) {
		if seen[u.SkillID] {
			continue // a skill attached twice counts once, as its first
		}
		seen[u.SkillID] = true
		u.Outcome = outcome
		rows = append(rows, store.SkillUsage{SkillUse: u, WorkspaceID: t.WorkspaceID, AgentID: t.AgentID, CreatedAt: t.CreatedAt, FinishedAt: t.FinishedAt})
	}
	err = s.db.SkillUsageReplace(ctx, &store.SkillUsageReplaceParams{TaskID: t.ID, ExpectSeq: p.IndexedSeq, Seq: lastSeq(entries), Rows: rows})
	if err == nil && snapErr != nil {
		err = snapErr
	}
	return outcome, rows, err
}

func lastSeq(entries []*skilld.TaskLogEntry) int64 {
	if len(entries) == 0 {
		return 0
	}
	return entries[len(entries)-1].Seq
}

// UsageSweep paces SweepSkillUsage and hears from it.
type UsageSweep struct {
	// Interval is the time between passes (default UsageSweepInterval).
	Interval time.Duration
	// Batch is the most tasks one pass indexes (default UsageSweepBatch).
	Batch int
	// Report, when set, is told after each pass how many tasks it
	// indexed and what failed (nil when nothing did).
	Report func(indexed int, err error)
}

// SweepSkillUsage indexes finished tasks (IndexSkillUsage, every
// workspace) at once and then every interval, until ctx is done.
func (s *Service) SweepSkillUsage(ctx context.Context, o UsageSweep) {
	sweep(ctx, orDefault(o.Interval, UsageSweepInterval), func() (int, error) {
		return s.IndexSkillUsage(ctx, "", orDefault(o.Batch, UsageSweepBatch))
	}, o.Report)
}

type SkillStatsParams struct {
	Agent string    `json:"agent,omitempty" query:"agent" jsonschema:"only tasks of this agent, and only the skills attached to it (ID or name)"`
	Skill string    `json:"skill,omitempty" query:"skill" jsonschema:"only this skill (ID or slug)"`
	From  time.Time `json:"from,omitzero" query:"from" jsonschema:"only tasks created at or after this time (RFC 3339)"`
	To    time.Time `json:"to,omitzero" query:"to" jsonschema:"only tasks created before this time (RFC 3339)"`
}

type SkillStatsList struct {
	Items []analytics.SkillStats `json:"items"`
}

// SkillStats reports what finished tasks did with each skill of the
// workspace, or of the agent, or with one skill (viewers and up): every
// skill is listed, zeros included. The workspace's tasks that finished since the last pass
// of the indexer are indexed first, up to UsageQueryBatch of them.
func (s *Service) SkillStats(ctx context.Context, a Actor, p SkillStatsParams) (*SkillStatsList, error) {
	if err := a.can(skilld.RoleViewer); err != nil {
		return nil, err
	}
	q := store.SkillUsageSummaryParams{WorkspaceID: a.WorkspaceID, From: p.From, To: p.To}
	if !q.From.IsZero() && !q.To.IsZero() && !q.From.Before(q.To) {
		return nil, invalidField("to", "to (%s) must be after from (%s)", q.To.Format(time.RFC3339), q.From.Format(time.RFC3339))
	}
	var only *skilld.Skill
	if p.Skill != "" {
		sk, err := s.skill(ctx, a, p.Skill)
		if err != nil {
			return nil, err
		}
		only, q.SkillID = sk, sk.ID
	}
	var refs []analytics.SkillRef
	switch {
	case p.Agent != "":
		ag, err := s.agent(ctx, a, p.Agent)
		if err != nil {
			return nil, err
		}
		q.AgentID = ag.ID
		for _, att := range ag.Skills {
			if only != nil && att.SkillID != only.ID {
				continue
			}
			sk, err := s.db.SkillGet(ctx, &store.SkillGetParams{WorkspaceID: a.WorkspaceID, ID: att.SkillID})
			if err != nil {
				return nil, err
			}
			refs = append(refs, analytics.SkillRef{ID: sk.ID, Name: sk.Name})
		}
	case only != nil:
		refs = []analytics.SkillRef{{ID: only.ID, Name: only.Name}}
	default:
		skills, err := s.workspaceSkills(ctx, a.WorkspaceID)
		if err != nil {
			return nil, err
		}
		for _, sk := range skills {
			refs = append(refs, analytics.SkillRef{ID: sk.ID, Name: sk.Name})
		}
	}
	// A failure to index leaves the answer as fresh as the last pass: the
	// query still answers, and the sweeper retries.
	s.IndexSkillUsage(ctx, a.WorkspaceID, UsageQueryBatch)
	groups, err := s.db.SkillUsageSummary(ctx, &q)
	if err != nil {
		return nil, err
	}
	return &SkillStatsList{Items: analytics.Summarize(refs, groups)}, nil
}
