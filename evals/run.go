package evals

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/skilld/skilld"
)

// Defaults and bounds of a run.
const (
	DefaultRuns        = 3
	MaxRuns            = 20
	DefaultConcurrency = 4
)

// Outcome is what the model did first with one query: activated Skill,
// called OtherTool, or answered (both empty); Tokens is what it cost.
type Outcome struct {
	Skill     string
	OtherTool string
	Tokens    int64
}

// Decider asks the model one query, as the agent's first request would.
type Decider func(ctx context.Context, query string) (Outcome, error)

// Options tune Run; zero fields take the defaults.
type Options struct {
	Runs        int
	Concurrency int
}

// Report is an eval run: each skill's score, and the tokens spent in all.
type Report struct {
	Runs   int          `json:"runs"`
	Tokens int64        `json:"tokens"`
	Skills []SkillScore `json:"skills"`
}

// Run asks every case Runs times, at most Concurrency at once, and scores
// skills over the outcomes. The first error of a Decider ends the run:
// what failed is the model or the agent's config, which the next query
// would meet too.
func Run(ctx context.Context, skills []string, cases []Case, decide Decider, opt Options) (*Report, error) {
	if opt.Runs == 0 {
		opt.Runs = DefaultRuns
	}
	if opt.Runs < 1 || opt.Runs > MaxRuns {
		return nil, skilld.Errorf(skilld.EINVALID, "runs must be between 1 and %d, not %d", MaxRuns, opt.Runs)
	}
	if opt.Concurrency <= 0 {
		opt.Concurrency = DefaultConcurrency
	}
	outcomes := make([][]Outcome, len(cases))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(opt.Concurrency)
	for i, c := range cases {
		outcomes[i] = make([]Outcome, opt.Runs)
		for r := range opt.Runs {
			g.Go(func() error {
				o, err := decide(gctx, c.Query)
				if err != nil {
					return fmt.Errorf("asking %q: %w", c.Query, err)
				}
				outcomes[i][r] = o
				return nil
			})
		}
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	rep := &Report{Runs: opt.Runs, Skills: make([]SkillScore, len(skills))}
	for i, sk := range skills {
		rep.Skills[i] = score(sk, cases, outcomes)
	}
	for _, os := range outcomes {
		for _, o := range os {
			rep.Tokens += o.Tokens
		}
	}
	return rep, nil
}
