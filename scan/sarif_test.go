package scan_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/internal/sarif/sariftest"
	"github.com/skilld/skilld/scan"
)

// TestSARIF: the findings on every fixture, as one SARIF log, fit the
// shape code-scanning tools read (sariftest: the fields SARIF 2.1.0
// requires); every rule is in the driver with a
// security severity, every result points at its rule by ID and index with
// its level and is located at its file and line; a finding of a rule the
// scanner lacks adds that rule.
func TestSARIF(t *testing.T) {
	s := scan.Default()
	var findings []skilld.Finding
	for _, r := range s.Rules() {
		findings = append(findings, scanDir(t, s, filepath.Join("testdata", "fire", r.ID))...)
	}
	findings = append(findings, skilld.Finding{Rule: "from-a-newer-server", Severity: skilld.SeverityLow, File: "a b.md", Line: 2, Message: "m"})
	var buf bytes.Buffer
	if err := s.WriteSARIF(&buf, "v1.2.3", findings); err != nil {
		t.Fatal(err)
	}
	log := sariftest.Read(t, buf.Bytes())
	if log.Version != "2.1.0" || len(log.Runs) != 1 {
		t.Fatalf("version %q, %d runs", log.Version, len(log.Runs))
	}
	run := log.Runs[0]
	rules := run.Tool.Driver.Rules
	if len(rules) != len(s.Rules())+1 || len(run.Results) != len(findings) {
		t.Fatalf("%d rules, %d results; want %d and %d", len(rules), len(run.Results), len(s.Rules())+1, len(findings))
	}
	for _, r := range rules {
		if r.Properties.SecuritySeverity == "" {
			t.Errorf("rule %s has no security-severity", r.ID)
		}
	}
	for i, res := range run.Results {
		rule := rules[res.RuleIndex]
		loc := res.Locations[0].PhysicalLocation
		if rule.ID != res.RuleID || rule.DefaultConfiguration.Level != res.Level || loc.ArtifactLocation.URI == "" {
			t.Errorf("result %+v does not match rule %+v", res, rule)
		}
		if f := findings[i]; f.Line > 0 && (loc.Region == nil || loc.Region.StartLine != f.Line) {
			t.Errorf("result %d at %+v, finding at line %d", i, loc.Region, f.Line)
		}
	}
	if last := run.Results[len(run.Results)-1]; last.Locations[0].PhysicalLocation.ArtifactLocation.URI != "a%20b.md" {
		t.Errorf("uri %q", last.Locations[0].PhysicalLocation.ArtifactLocation.URI)
	}
}
