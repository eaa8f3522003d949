package lint

import (
	"io"

	"github.com/skilld/skilld/internal/sarif"
)

// sarifLevel maps a severity to SARIF's levels, where info is "note".
func sarifLevel(s Severity) string {
	if s == Info {
		return "note"
	}
	return string(s)
}

// WriteSARIF writes the reports as one SARIF 2.1.0 log: one run whose
// driver (toolVersion is skilld's version) lists every rule, and one result
// per finding, located by Report.Location relative to where skilld lint
// ran.
func WriteSARIF(w io.Writer, toolVersion string, reports []Report) error {
	rules := Rules()
	index := make(map[string]int, len(rules))
	driver := sarif.Driver{Name: "skilld lint", Version: toolVersion, Rules: make([]sarif.Rule, len(rules))}
	for i, r := range rules {
		index[r.ID] = i
		driver.Rules[i] = sarif.Rule{ID: r.ID, ShortDescription: sarif.Text{Text: r.Summary}, DefaultConfiguration: sarif.RuleConfig{Level: sarifLevel(r.Severity)}}
	}
	var results []sarif.Result
	for _, rep := range reports {
		for _, f := range rep.Findings {
			results = append(results, sarif.Result{RuleID: f.Rule, RuleIndex: index[f.Rule], Level: sarifLevel(f.Severity),
				Message: sarif.Text{Text: f.Message}, Locations: sarif.At(rep.Location(f), f.Line)})
		}
	}
	return sarif.Write(w, driver, results)
}
