package executor

import (
	"cmp"
	"context"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/evals"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/sandbox"
	"github.com/skilld/skilld/service"
)

var _ service.EvalDecider = (*Local)(nil)

// EvalDecider opens the model a run of snap would use (ref instead, when
// set) and returns a Decider asking it, with the agent.Config a task of
// snap runs with, what it does first with a query. The config offers the
// sandbox tools a task's has, over a sandbox that is never made: no tool
// runs in a decision, and nothing is placed.
func (l *Local) EvalDecider(ctx context.Context, workspaceID string, snap *service.Snapshot, ref string) (evals.Decider, string, error) {
	ref = cmp.Or(ref, snap.Model)
	rm, err := l.openModel(snap.AgentName, ref, snap.Context.Window, RunOptions{})
	if err != nil {
		return nil, "", err
	}
	cfg, err := l.runConfig(ctx, &skilld.Task{ID: "eval", WorkspaceID: workspaceID}, snap, rm)
	if err != nil {
		return nil, "", err
	}
	cfg.Sandbox = unmade{}
	decide := func(ctx context.Context, query string) (evals.Outcome, error) {
		d, err := agent.Decide(ctx, cfg, query)
		if err != nil {
			return evals.Outcome{}, err
		}
		return evals.Outcome{Skill: d.Skill, OtherTool: d.OtherTool, Tokens: int64(d.Usage.PromptTokens + d.Usage.CompletionTokens)}, nil
	}
	return decide, ref, nil
}

// unmade is the sandbox of a decision: its tools are offered, as a task's
// are, but a decision ends before any runs. Placing a skill (a query that
// invokes one with /name) is refused, which the run reports to the model
// as it would any placement failure.
type unmade struct{ sandbox.Sandbox }

func (unmade) ID() string       { return "eval" }
func (unmade) HostPath() string { return "" }
func (unmade) Place(context.Context, string, *pack.Package) error {
	return skilld.Errorf(skilld.EUNAVAILABLE, "an eval makes no sandbox")
}
