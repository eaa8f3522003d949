package executor

import (
	"cmp"
	"fmt"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/service"
)

// runModel is what a run needs of its agent's model.
type runModel struct {
	model   model.Model
	name    string // the provider's name of the model
	counter agent.Counter
	window  int
}

// openModel opens the model reference ref of agent agentName, whose
// config sets window (0: the model's known one), as a run of it would;
// opts may replace the model and the window. Its errors say what is wrong
// and what to change, with the config field as their detail.
func (l *Local) openModel(agentName, ref string, window int, opts RunOptions) (runModel, error) {
	rm := runModel{model: opts.Model, name: opts.ModelName, window: cmp.Or(opts.Window, window)}
	if rm.model == nil {
		if ref == "" {
			return runModel{}, modelError("config.model", nil, "agent %q has no model; set config.model (for example openai:gpt-4o-mini)", agentName)
		}
		m, name, err := l.cfg.OpenModel(ref)
		if err != nil {
			return runModel{}, modelError("config.model", err, "agent %q cannot use its model %q on this server: %s", agentName, ref, skilld.ErrorMessage(err))
		}
		rm.model, rm.name = m, name
	}
	counter, err := l.cfg.Tokenizer(ref)
	if err != nil {
		return runModel{}, modelError("config.model", err, "agent %q cannot use its model %q on this server: %s", agentName, ref, skilld.ErrorMessage(err))
	}
	rm.counter = counter
	if rm.window == 0 {
		w, ok := l.cfg.Window(ref)
		if !ok {
			return runModel{}, modelError("config.context.window", nil, "the context window of %q is not known; set config.context.window on agent %q", ref, agentName)
		}
		rm.window = w
	}
	return rm, nil
}

// modelError is EINVALID naming field, caused by err: whatever the
// provider's code (a disabled provider is forbidden, a missing key
// unauthorized), the fault is in the agent's config as this server sees
// it, not in the caller's rights.
func modelError(field string, err error, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	return &skilld.Error{Code: skilld.EINVALID, Message: msg, Details: []skilld.Detail{{Field: field, Message: msg}}, Err: err}
}

var _ service.ModelChecker = (*Local)(nil)

// CheckModel reports why a task of agent agentName, with model ref and
// context window (0: the model's known one), could not run here, or nil:
// the checks its run makes before its first step (the model opened, its
// tokenizer, its window), so that a task that would fail on them is
// refused at its start instead.
func (l *Local) CheckModel(agentName, ref string, window int) error {
	_, err := l.openModel(agentName, ref, window, RunOptions{})
	return err
}
