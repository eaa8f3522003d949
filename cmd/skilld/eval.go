package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/model/provider"
	"github.com/skilld/skilld/agent/tokenizer"
	"github.com/skilld/skilld/evals"
	"github.com/skilld/skilld/service"
)

// runEval is "skilld eval": the trigger evals of an agent's skills, on a
// server (with a token) or, headless, on the storage of --data/--db/--blobs
// with the model opened in this process.
func runEval(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "eval", "--agent NAME [--skill NAME] [--runs N] [--model REF] [--json]\n\n"+
		"Asks the agent's model each query of its skills' eval sets (evals/evals.json in\n"+
		"a skill's package) and of its own (config.evals) --runs times, with the agent's\n"+
		"real catalog, and prints each skill's precision, recall and per-query trigger\n"+
		"rates; the results are stored. With a token it runs on the server; without one,\n"+
		"on the storage given by --data/--db/--blobs, in this process")
	var p service.RunEvalsParams
	var storage storageFlags
	var baseURL, apiKey string
	c.fs.StringVar(&p.Agent, "agent", "", "the agent to evaluate (ID or name)")
	c.fs.StringVar(&p.Skill, "skill", "", "evaluate only this attached skill")
	c.fs.IntVar(&p.Runs, "runs", evals.DefaultRuns, "times each query is asked")
	c.fs.StringVar(&p.Model, "model", "", "model reference to use instead of the agent's")
	storage.registerStores(c.fs)
	c.fs.StringVar(&baseURL, "base-url", "", "headless: the provider's API base URL (default: OPENAI_BASE_URL / ANTHROPIC_BASE_URL)")
	c.fs.StringVar(&apiKey, "api-key", "", "headless: API key (default: OPENAI_API_KEY / ANTHROPIC_API_KEY)")
	pos, code, ok := parseArgs(c.fs, args)
	if !ok {
		return code
	}
	switch {
	case len(pos) > 0:
		return usageErrorf(c.fs, "unexpected argument %q", pos[0])
	case p.Agent == "":
		return usageErrorf(c.fs, "--agent is required")
	case p.Runs < 1 || p.Runs > evals.MaxRuns:
		return usageErrorf(c.fs, "--runs must be between 1 and %d", evals.MaxRuns)
	}
	var run *service.EvalRun
	if c.token != "" {
		if run, ok = call(ctx, c, service.OpEvalsRun, p); !ok {
			return exitFailure
		}
	} else {
		m := &models{opts: provider.Options{BaseURL: baseURL, APIKey: apiKey}, tokens: tokenizer.NewCache(), scripted: true}
		var err error
		if run, err = evalHeadless(ctx, &storage, m, cmp.Or(c.workspace, service.BootstrapWorkspace), p); err != nil {
			fmt.Fprintf(e.stderr, "skilld eval: %s\n", errorText(err))
			if skilld.ErrorCode(err) == skilld.EINVALID {
				return exitUsage
			}
			return exitFailure
		}
	}
	return c.output(run, func(w io.Writer) { printEvalRun(w, run) })
}

// evalHeadless runs the evals on the storage itself, as its administrator
// (whoever can open the database directly is), with models opened here.
func evalHeadless(ctx context.Context, storage *storageFlags, m *models, workspace string, p service.RunEvalsParams) (*service.EvalRun, error) {
	db, blobs, err := storage.openExisting(ctx)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	defer blobs.Close()
	svc := service.New(db, blobs, nil, service.Config{Executor: func(s *service.Service) service.Executor {
		return newExecutor(s, db, blobs, nil, skilld.Errorf(skilld.EUNAVAILABLE, "skilld eval runs no tasks"), m, execOptions{})
	}})
	actor, err := svc.In(ctx, service.Actor{InstanceAdmin: true, Role: skilld.RoleAdmin, Name: "skilld eval"}, workspace)
	if err != nil {
		return nil, err
	}
	return svc.RunEvals(ctx, actor, p)
}

func printEvalRun(w io.Writer, run *service.EvalRun) {
	fmt.Fprintf(w, "agent %s, model %s, %d runs per query, %d tokens\n\n", run.Agent, run.Model, run.Runs, run.Tokens)
	names := make([]string, 0, len(run.Skills))
	for n := range run.Skills {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		s := run.Skills[n]
		row(w, "SKILL", "PRECISION", "RECALL", "TOKENS", "FALSE TRIGGERS")
		var ft []string
		for o, k := range s.FalseTriggers {
			ft = append(ft, fmt.Sprintf("%s ×%d", o, k))
		}
		slices.Sort(ft)
		row(w, n, fmt.Sprintf("%.2f [%.2f–%.2f]", s.Precision, s.PrecisionLow, s.PrecisionHigh),
			fmt.Sprintf("%.2f [%.2f–%.2f]", s.Recall, s.RecallLow, s.RecallHigh), s.Tokens, cmp.Or(strings.Join(ft, ", "), "none"))
		row(w, "", "QUERY", "SHOULD", "RATE", "")
		for _, q := range s.Queries {
			row(w, "", q.Query, q.ShouldTrigger, fmt.Sprintf("%d/%d [%.2f–%.2f]", q.Triggers, q.Runs, q.Low, q.High), "")
		}
		fmt.Fprintln(w)
	}
}
