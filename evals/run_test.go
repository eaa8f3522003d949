package evals_test

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"

	"github.com/skilld/skilld/evals"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-4 }

func TestWilson(t *testing.T) {
	cases := []struct {
		k, n      int
		low, high float64
	}{
		{0, 3, 0, 0.5615},
		{3, 3, 0.4385, 1},
		{5, 10, 0.2366, 0.7634},
		{0, 0, 0, 1},
	}
	for _, c := range cases {
		low, high := evals.Wilson(c.k, c.n)
		if !near(low, c.low) || !near(high, c.high) {
			t.Errorf("Wilson(%d, %d) = [%.4f, %.4f], want [%.4f, %.4f]", c.k, c.n, low, high, c.low, c.high)
		}
	}
}

// A decider answering from a table, alternating where the table gives two
// answers: counts of each query's calls decide which.
type table struct {
	mu      sync.Mutex
	answers map[string][]evals.Outcome
	calls   map[string]int
}

func (tb *table) decide(_ context.Context, q string) (evals.Outcome, error) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	a := tb.answers[q]
	o := a[tb.calls[q]%len(a)]
	tb.calls[q]++
	return o, nil
}

func TestRunScores(t *testing.T) {
	tb := &table{calls: map[string]int{}, answers: map[string][]evals.Outcome{
		"csv columns":   {{Skill: "csv", Tokens: 10}},                               // 4 of 4 right
		"csv totals":    {{Skill: "csv", Tokens: 10}, {Skill: "notes", Tokens: 10}}, // 2 of 4, 2 false triggers of notes
		"weather":       {{Tokens: 5}, {Skill: "csv", Tokens: 5}},                   // 2 of 4 false triggers of csv
		"release notes": {{Skill: "notes", Tokens: 7}, {OtherTool: "search_skills", Tokens: 7}},
	}}
	cases := []evals.Case{
		{Query: "csv columns", Expect: "csv", Owner: "csv"},
		{Query: "csv totals", Expect: "csv", Owner: "csv"},
		{Query: "weather", Owner: "csv"},
		{Query: "release notes", Expect: "notes"},
	}
	rep, err := evals.Run(t.Context(), []string{"csv", "notes"}, cases, tb.decide, evals.Options{Runs: 4, Concurrency: 3})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Runs != 4 || rep.Tokens != 4*(10+10+5+7) {
		t.Errorf("runs %d tokens %d", rep.Runs, rep.Tokens)
	}
	csv, notes := rep.Skills[0], rep.Skills[1]
	// csv: TP 6, FN 2, FP 2.
	if !near(csv.Precision, 0.75) || !near(csv.Recall, 0.75) {
		t.Errorf("csv precision %v recall %v, want 0.75 and 0.75", csv.Precision, csv.Recall)
	}
	if len(csv.Queries) != 3 || csv.Queries[1].Rate != 0.5 || csv.Queries[1].Others["notes"] != 2 || csv.Queries[2].ShouldTrigger || csv.Queries[2].Triggers != 2 {
		t.Errorf("csv queries %+v", csv.Queries)
	}
	if csv.FalseTriggers["notes"] != 2 || csv.Tokens != 4*(10+10+5) {
		t.Errorf("csv false triggers %v tokens %d", csv.FalseTriggers, csv.Tokens)
	}
	// notes: TP 2, FN 2 (the other tool), FP 2 (on csv totals).
	if !near(notes.Precision, 0.5) || !near(notes.Recall, 0.5) || notes.OtherTools != 2 || len(notes.Queries) != 1 {
		t.Errorf("notes %+v", notes)
	}
	if low, high := evals.Wilson(6, 8); csv.RecallLow != low || csv.RecallHigh != high {
		t.Errorf("csv recall interval [%v, %v]", csv.RecallLow, csv.RecallHigh)
	}
}

// A skill that never triggers and has no query expecting it scores 1 and
// 1: it was never wrong and missed nothing.
func TestRunEmptyScores(t *testing.T) {
	rep, err := evals.Run(t.Context(), []string{"idle"}, []evals.Case{{Query: "hello"}},
		func(context.Context, string) (evals.Outcome, error) { return evals.Outcome{}, nil }, evals.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s := rep.Skills[0]; s.Precision != 1 || s.Recall != 1 || rep.Runs != evals.DefaultRuns {
		t.Errorf("%+v", rep)
	}
}

func TestRunStopsAtAnError(t *testing.T) {
	boom := errors.New("provider down")
	_, err := evals.Run(t.Context(), []string{"x"}, []evals.Case{{Query: "a"}, {Query: "b"}},
		func(ctx context.Context, q string) (evals.Outcome, error) {
			return evals.Outcome{}, boom
		}, evals.Options{Runs: 2, Concurrency: 1})
	if !errors.Is(err, boom) {
		t.Errorf("error %v", err)
	}
	if _, err := evals.Run(t.Context(), nil, nil, nil, evals.Options{Runs: evals.MaxRuns + 1}); err == nil {
		t.Error("too many runs accepted")
	}
}
