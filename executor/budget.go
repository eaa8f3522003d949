package executor

import (
	"context"
	"errors"
	"sync"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/internal/units"
)

// DefaultOutputBudget is Config.OutputBudget's default.
const DefaultOutputBudget = 256 << 20

// errOutputBudget is the cause of a run stopped for keeping more bytes
// than its task may.
var errOutputBudget = errors.New("the task's storage budget is spent")

// outputBudget bounds the bytes one task keeps in storage: its log entries
// and its large tool outputs (each a blob kept as long as the task). Past
// it the run is stopped, so one task's loop of noisy commands cannot fill
// the database or the blob store.
type outputBudget struct {
	mu   sync.Mutex
	used int64
	max  int64
	stop context.CancelCauseFunc // the run's
}

// take counts an output of n bytes about to be stored, or stops the run
// and refuses it.
func (b *outputBudget) take(n int64) error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.max {
		b.stop(errOutputBudget)
		return skilld.Errorf(skilld.ETOOLARGE, "%s", b.spentLocked())
	}
	b.used += n
	return nil
}

// count counts a log entry of n bytes already written, and stops the run
// once the task keeps more than its budget. The entry stays: a log is
// never cut short, and the entries that record the stop must follow it.
func (b *outputBudget) count(n int64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used += n; b.used > b.max {
		b.stop(errOutputBudget)
	}
}

func (b *outputBudget) spent() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.spentLocked()
}

func (b *outputBudget) spentLocked() string {
	return "the task keeps " + units.Bytes(b.used) + " of log and large tool outputs and may keep at most " + units.Bytes(b.max) +
		" (the server's --task-output-budget); it was stopped"
}

// newOutputBudget starts a run's budget from what its task keeps already:
// its past log, and the outputs its row counts.
func (l *Local) newOutputBudget(t *skilld.Task, past []agent.LogEntry, stop context.CancelCauseFunc) *outputBudget {
	b := &outputBudget{max: l.cfg.OutputBudget, stop: stop, used: t.Stored.OutputBytes}
	for _, e := range past {
		b.used += int64(len(e.Payload))
	}
	return b
}
