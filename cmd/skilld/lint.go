package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/skilld/skilld/agent/tokenizer"
	"github.com/skilld/skilld/lint"
	"github.com/skilld/skilld/pack"
)

func runLint(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "lint", "[--json | --sarif] PATH...\n\n"+
		"Reports what makes a skill hard for a model to select or to use; docs/LINT.md\n"+
		"lists the rules. PATH is a skill directory, a SKILL.md file, a .zip/.skill/\n"+
		".tar/.tar.gz archive, or a folder searched recursively for skills. Exit status:\n"+
		"0 when no finding is a warning or an error (infos do not count), 1 when one\n"+
		"is, 2 on usage errors.")
	out := newReportFlags(fs)
	sources, code, ok := out.sources(ctx, args)
	if !ok {
		return code
	}
	asJSON, asSARIF := out.json, out.sarif
	// The runtime counts with o200k_base for every model it does not know
	// better (docs/CONTEXT.md); lint's budgets are the runtime's.
	counter, err := tokenizer.NewCache().Get(tokenizer.O200kBase)
	if err != nil {
		fmt.Fprintf(e.stderr, "skilld lint: %v\n", err)
		return exitFailure
	}
	var reports []lint.Report
	for _, rs := range forEach(ctx, sources, func(ctx context.Context, s source) []lint.Report {
		return lintSource(ctx, s, counter.Count)
	}) {
		reports = append(reports, rs...)
	}
	if err := ctx.Err(); err != nil {
		fmt.Fprintf(e.stderr, "skilld lint: %v\n", err)
		return exitFailure
	}
	toSARIF := func(w io.Writer) error { return lint.WriteSARIF(w, strings.Fields(versionString())[1], reports) }
	if !writeReports(e, "lint", *asSARIF, *asJSON, toSARIF, reports, func(w io.Writer) { printLint(w, reports) }) {
		return exitFailure
	}
	for _, r := range reports {
		if lint.Failing(r.Findings) {
			return exitFailure
		}
	}
	return exitOK
}

// lintSource lints the skill of a source; an archive holding several
// skills and none at its root is linted skill by skill, each as
// "ARCHIVE!/FOLDER", as validate does.
func lintSource(ctx context.Context, s source, count func(string) int) []lint.Report {
	p, dir, err := s.load(ctx)
	if err != nil {
		return []lint.Report{invalidReport(s.path, err)}
	}
	dirs := p.SkillDirs()
	if !s.archive || len(dirs) == 0 || dirs[0] == "." {
		return []lint.Report{lintPackage(ctx, s.path, s.archive, p, dir, count)}
	}
	out := make([]lint.Report, len(dirs))
	for i, d := range dirs {
		path := s.path + "!/" + d
		sub, err := p.Sub(d)
		if err != nil {
			out[i] = invalidReport(path, err)
			continue
		}
		out[i] = lintPackage(ctx, path, false, sub, sub.TopDir(), count)
	}
	return out
}

// lintPackage lints one skill package into a report on path; dir is the
// folder name the skill's name must match ("" for none).
func lintPackage(ctx context.Context, path string, archive bool, p *pack.Package, dir string, count func(string) int) lint.Report {
	r, err := lint.Check(ctx, p, lint.Options{Dir: dir, Count: count})
	if err != nil {
		return invalidReport(path, err)
	}
	r.Path, r.Archive = path, archive
	return r
}

// invalidReport is the report on a path that holds no skill to lint.
func invalidReport(path string, err error) lint.Report {
	return lint.Report{Path: path, Findings: []lint.Finding{lint.Invalid(errorText(err))}}
}

// writeReports writes the reports of lint or scan (cmd) as SARIF, JSON or
// text; false when that failed, which it reports.
func writeReports(e *env, cmd string, asSARIF, asJSON bool, toSARIF func(io.Writer) error, reports any, text func(io.Writer)) bool {
	var err error
	switch {
	case asSARIF:
		err = toSARIF(e.stdout)
	case asJSON:
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(reports)
	default:
		text(e.stdout)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "skilld %s: %v\n", cmd, err)
		return false
	}
	return true
}

// printLint prints one line a finding, "LOCATION:LINE: SEVERITY: MESSAGE
// [RULE]" as compilers do, and a summary.
func printLint(w io.Writer, reports []lint.Report) {
	counts := map[lint.Severity]int{}
	for _, r := range reports {
		for _, f := range r.Findings {
			counts[f.Severity]++
			loc := r.Location(f)
			if f.Line > 0 {
				loc += fmt.Sprintf(":%d", f.Line)
			}
			fmt.Fprintf(w, "%s: %s: %s [%s]\n", loc, f.Severity, f.Message, f.Rule)
		}
	}
	noun := "skills"
	if len(reports) == 1 {
		noun = "skill"
	}
	fmt.Fprintf(w, "%d %s linted: %s, %s, %s\n", len(reports), noun,
		plural(counts[lint.Error], "error"), plural(counts[lint.Warning], "warning"), plural(counts[lint.Info], "info"))
}
