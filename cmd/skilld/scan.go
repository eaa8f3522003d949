package main

import (
	"context"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/scan"
)

// scanReport is the findings on one skill found from the command line.
type scanReport struct {
	Path     string           `json:"path"`
	Findings []skilld.Finding `json:"findings"`
	Error    string           `json:"error,omitempty"`
}

// runScan scans skills on disk with the package scanner the server runs:
// what `skills findings` would show once they are stored.
func runScan(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "scan", "[--json | --sarif] PATH...\n\n"+
		"Scans skills with the security scanner the server runs on every stored package;\n"+
		"docs/TRUST.md lists the rules. PATH is a skill directory, an archive, or a folder\n"+
		"searched recursively for skills. Exit status: 0 when no finding is high or\n"+
		"critical, 1 when one is (or a path cannot be read), 2 on usage errors.")
	out := newReportFlags(fs)
	sources, code, ok := out.sources(ctx, args)
	if !ok {
		return code
	}
	asJSON, asSARIF := out.json, out.sarif
	sc := scan.Default()
	var reports []scanReport
	for _, rs := range forEach(ctx, sources, func(ctx context.Context, s source) []scanReport { return scanSource(ctx, sc, s) }) {
		reports = append(reports, rs...)
	}
	if err := ctx.Err(); err != nil {
		fmt.Fprintf(e.stderr, "skilld scan: %v\n", err)
		return exitFailure
	}
	toSARIF := func(w io.Writer) error {
		var all []skilld.Finding
		for _, r := range reports {
			for _, f := range r.Findings {
				f.File = path.Join(filepath.ToSlash(r.Path), f.File)
				all = append(all, f)
			}
		}
		return sc.WriteSARIF(w, strings.Fields(versionString())[1], all)
	}
	if !writeReports(e, "scan", *asSARIF, *asJSON, toSARIF, reports, func(w io.Writer) { printScan(w, reports) }) {
		return exitFailure
	}
	for _, r := range reports {
		if r.Error != "" || (&skilld.PackageScan{Findings: r.Findings}).Worst().Rank() >= skilld.SeverityHigh.Rank() {
			return exitFailure
		}
	}
	return exitOK
}

// scanSource scans the skill of a source; an archive holding several
// skills and none at its root is scanned skill by skill, as lint does.
func scanSource(ctx context.Context, sc *scan.Scanner, s source) []scanReport {
	p, _, err := s.load(ctx)
	if err != nil {
		return []scanReport{{Path: s.path, Findings: []skilld.Finding{}, Error: errorText(err)}}
	}
	dirs := p.SkillDirs()
	if !s.archive || len(dirs) == 0 || dirs[0] == "." {
		found, err := sc.Scan(ctx, p)
		return []scanReport{{Path: s.path, Findings: found, Error: errText(err)}}
	}
	var out []scanReport
	for _, d := range dirs {
		r := scanReport{Path: s.path + "!/" + d, Findings: []skilld.Finding{}}
		sub, err := p.Sub(d)
		if err == nil {
			r.Findings, err = sc.Scan(ctx, sub)
		}
		r.Error = errText(err)
		out = append(out, r)
	}
	return out
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return errorText(err)
}

// printScan prints one line a finding, "LOCATION:LINE: SEVERITY: MESSAGE
// [RULE]" and the excerpt indented under it, then the counts.
func printScan(w io.Writer, reports []scanReport) {
	counts := map[skilld.Severity]int{}
	for _, r := range reports {
		if r.Error != "" {
			fmt.Fprintf(w, "%s: %s\n", r.Path, r.Error)
		}
		for _, f := range r.Findings {
			counts[f.Severity]++
			loc := path.Join(filepath.ToSlash(r.Path), f.File)
			if f.Line > 0 {
				loc += fmt.Sprintf(":%d", f.Line)
			}
			fmt.Fprintf(w, "%s: %s: %s [%s]\n", loc, f.Severity, f.Message, f.Rule)
			if f.Excerpt != "" {
				fmt.Fprintf(w, "    %s\n", f.Excerpt)
			}
		}
	}
	fmt.Fprintf(w, "%s scanned: %d critical, %d high, %d medium, %d low, %d info\n", plural(len(reports), "skill"),
		counts[skilld.SeverityCritical], counts[skilld.SeverityHigh], counts[skilld.SeverityMedium], counts[skilld.SeverityLow], counts[skilld.SeverityInfo])
}
