package store

import (
	"context"
	"errors"
	"time"
)

// SkillUsageQueries keep what each finished task did with each attached
// skill (analytics.Extract), indexed from task logs, for skill analytics.
type SkillUsageQueries interface {
	// SkillUsagePending lists finished tasks whose log is past what was
	// indexed of it (never indexed, or run again since), at most Limit,
	// in ID order; with WorkspaceID set, only that workspace's.
	SkillUsagePending(ctx context.Context, p *SkillUsagePendingParams) ([]SkillUsageTask, error)
	// SkillUsageReplace replaces a task's rows with Rows and moves its
	// mark from ExpectSeq to Seq, in one transaction. ECONFLICT
	// (ErrUsageMoved) when the mark is no longer ExpectSeq: another
	// indexer got there first, and nothing is written; ENOTFOUND when
	// the task is gone.
	SkillUsageReplace(ctx context.Context, p *SkillUsageReplaceParams) error
	// SkillUsageSummary sums the rows of a workspace's tasks created in
	// [From, To) (zero: unbounded), of one agent when AgentID is set and
	// of one skill when SkillID is,
	// grouped by skill, version, offer, withheld rule, outcome and
	// refusal reasons: one group per combination, however many tasks.
	SkillUsageSummary(ctx context.Context, p *SkillUsageSummaryParams) ([]SkillUsageGroup, error)
}

// ErrUsageMoved is the cause of a SkillUsageReplace refused because the
// task's mark moved.
var ErrUsageMoved = errors.New("the task's skill usage was indexed meanwhile")

type SkillUsagePendingParams struct {
	WorkspaceID string
	Limit       int
}

// SkillUsageTask is a task to index: IndexedSeq is its mark, LastSeq its
// log's last entry.
type SkillUsageTask struct {
	ID          string
	WorkspaceID string
	IndexedSeq  int64
	LastSeq     int64
}

type SkillUsageReplaceParams struct {
	TaskID    string
	ExpectSeq int64
	Seq       int64
	Rows      []SkillUsage
}

// SkillUsage is one task's use of one attached skill: what its log says
// (SkillUse) and the task's own fields the rows are filtered by.
type SkillUsage struct {
	SkillUse
	WorkspaceID string
	AgentID     string
	CreatedAt   time.Time
	FinishedAt  *time.Time
}

// SkillUse is what one task did with one attached skill, as its log says
// (analytics.Extract).
type SkillUse struct {
	SkillID string
	Name    string
	Version int
	Digest  string
	// Offer is how the catalog offered the skill (analytics.OfferFull,
	// …); WithheldRule the install rule that withheld it.
	Offer        string
	WithheldRule string
	// Activations counts its activations; FirstIteration is the model
	// call whose answer first activated it (0: the user's "/name" input,
	// before any call), -1 when it was never activated.
	Activations    int
	FirstIteration int
	// Refusals counts activations refused; RefusalReasons by reason
	// (analytics.ReasonKind: the numbers in a reason replaced by N).
	Refusals       int
	RefusalReasons map[string]int
	Unloads        int
	// Found counts the searches whose results named it.
	Found   int
	Outcome string
}

type SkillUsageSummaryParams struct {
	WorkspaceID string
	AgentID     string
	SkillID     string
	From, To    time.Time
}

// SkillUsageGroup sums the rows that agree on everything but their counts.
type SkillUsageGroup struct {
	SkillID        string
	Name           string
	Version        int
	Digest         string
	Offer          string
	WithheldRule   string
	Outcome        string
	RefusalReasons map[string]int
	// Tasks counts the rows; TasksActivated those with an activation,
	// FirstIterations sums their first iterations.
	Tasks           int
	TasksActivated  int
	FirstIterations int
	Activations     int
	Refusals        int
	Unloads         int
	Found           int
}
