package executor

import (
	"context"
	"errors"
	"sync"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/sandbox"
)

// DefaultOutputBudget is Config.OutputBudget's default.
const DefaultOutputBudget = 256 << 20

// errOutputBudget is the cause of a run stopped for storing more large
// tool outputs than its task may.
var errOutputBudget = errors.New("the task's output budget is spent")

// outputBudget bounds the bytes of large tool outputs one task stores (each
// is a blob kept as long as the task): past it the run is stopped, so one
// task's loop of noisy commands cannot fill the blob store.
type outputBudget struct {
	mu   sync.Mutex
	used int64
	max  int64
	stop context.CancelCauseFunc // the run's
}

// take counts n more bytes, or stops the run and refuses them.
func (b *outputBudget) take(n int64) error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.max {
		b.stop(errOutputBudget)
		return skilld.Errorf(skilld.ETOOLARGE, "%s", b.spent())
	}
	b.used += n
	return nil
}

func (b *outputBudget) spent() string {
	return "the task stored " + sandbox.SizeText(b.used) + " of large tool outputs and may store at most " + sandbox.SizeText(b.max) +
		" (the server's --task-output-budget); it was stopped"
}

// newOutputBudget starts a run's budget from what its task stored before:
// the outputs its log says were offloaded, by their blobs' sizes.
func (l *Local) newOutputBudget(ctx context.Context, past []agent.LogEntry, stop context.CancelCauseFunc) *outputBudget {
	b := &outputBudget{max: l.cfg.OutputBudget, stop: stop}
	for _, e := range past {
		if e.Kind != agent.KindEvent {
			continue
		}
		ev, err := agent.EventOf("", e.Seq, e.Time, e.Kind, e.Payload)
		if err != nil {
			continue
		}
		if off, ok := ev.Payload.(agent.ToolOffloaded); ok {
			if info, err := l.cfg.Blobs.Stat(ctx, off.OutputID); err == nil {
				b.used += info.Size
			}
		}
	}
	return b
}
