package agent

import (
	"context"

	"github.com/skilld/skilld"
)

// StepKind names a side effect of a run: what an executor may want to
// schedule, time, retry or run elsewhere.
type StepKind string

// The side effects of a run, each recorded in the task log before the run
// goes on.
const (
	StepModel      StepKind = "model"      // a model call for the next turn
	StepCompaction StepKind = "compaction" // a model call summarizing old messages
	StepTool       StepKind = "tool"       // a tool call (activate_skill included)
	StepApproval   StepKind = "approval"   // waiting for a decision on a call
)

// Step is the side effect a run is about to perform.
type Step struct {
	Kind StepKind
	// Tool and CallID name a tool call (StepTool, StepApproval).
	Tool   string
	CallID string
}

// gate puts what the run wrote so far in the log (flush), then asks
// Config.Gate whether the run may perform s now. A refusal suspends the
// run: it stops and writes nothing more, to be resumed later. A run that
// stopped (its log failed, its consumer left) performs nothing more.
func (r *run) gate(ctx context.Context, s Step) error {
	if !r.flush(ctx) || r.stopped {
		return errStopped
	}
	if r.cfg.Gate == nil {
		return nil
	}
	if err := r.cfg.Gate(ctx, s); err != nil {
		r.stopped = true
		return err
	}
	return nil
}

// errStopped refuses a step of a run that stopped: its log entries could
// not be written, or no one reads its events any more.
var errStopped = skilld.Errorf(skilld.EUNAVAILABLE, "the run stopped")
