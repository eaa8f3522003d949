package scan

import (
	"io"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/internal/sarif"
)

// sarifLevel maps a severity to SARIF's three levels.
func sarifLevel(s skilld.Severity) string {
	switch s {
	case skilld.SeverityCritical, skilld.SeverityHigh:
		return "error"
	case skilld.SeverityMedium:
		return "warning"
	}
	return "note"
}

// securitySeverity is a severity as the 0.0–10.0 score code-scanning
// services rank security alerts by (GitHub's bands: 9.0 and up
// critical, 7.0 high, 4.0 medium, below low).
func securitySeverity(s skilld.Severity) string {
	switch s {
	case skilld.SeverityCritical:
		return "9.5"
	case skilld.SeverityHigh:
		return "8.0"
	case skilld.SeverityMedium:
		return "5.5"
	case skilld.SeverityLow:
		return "3.0"
	}
	return "0.5"
}

// WriteSARIF writes findings as one SARIF 2.1.0 log: the driver
// ("skilld scan", toolVersion) lists the scanner's rules, and a finding of
// a rule the scanner does not have (findings from a server with other
// rules) adds that rule, described by the finding's message. Each result
// is located at its file, relative to the skill's root, and line.
func (s *Scanner) WriteSARIF(w io.Writer, toolVersion string, findings []skilld.Finding) error {
	driver := sarif.Driver{Name: "skilld scan", Version: toolVersion}
	index := map[string]int{}
	add := func(id, summary string, sev skilld.Severity) {
		index[id] = len(driver.Rules)
		driver.Rules = append(driver.Rules, sarif.Rule{ID: id, ShortDescription: sarif.Text{Text: summary},
			DefaultConfiguration: sarif.RuleConfig{Level: sarifLevel(sev)},
			Properties:           &sarif.RuleProperties{Tags: []string{"security"}, SecuritySeverity: securitySeverity(sev)}})
	}
	for _, r := range s.ready().rules {
		add(r.ID, r.Summary, r.Severity)
	}
	results := make([]sarif.Result, 0, len(findings))
	for _, f := range findings {
		if _, ok := index[f.Rule]; !ok {
			add(f.Rule, f.Message, f.Severity)
		}
		msg := f.Message
		if f.Excerpt != "" {
			msg += ": " + f.Excerpt
		}
		results = append(results, sarif.Result{RuleID: f.Rule, RuleIndex: index[f.Rule], Level: sarifLevel(f.Severity),
			Message: sarif.Text{Text: msg}, Locations: sarif.At(f.File, f.Line)})
	}
	return sarif.Write(w, driver, results)
}
