package lint_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilld/skilld/internal/sarif/sariftest"
	"github.com/skilld/skilld/lint"
)

// TestSARIF: the findings on every bad fixture, as one SARIF log, fit the
// schema; every rule is listed in the driver, every result points at its
// rule by ID and index with SARIF's level, and is located at its file
// and line.
func TestSARIF(t *testing.T) {
	c := count(t)
	var reports []lint.Report
	findings := 0
	for _, r := range lint.Rules() {
		rep := lintDir(t, filepath.Join("testdata", "bad", r.ID), c)
		findings += len(rep.Findings)
		reports = append(reports, rep)
	}
	var buf bytes.Buffer
	if err := lint.WriteSARIF(&buf, "v1.2.3", reports); err != nil {
		t.Fatal(err)
	}
	log := sariftest.Read(t, buf.Bytes())
	run := log.Runs[0]
	rules := run.Tool.Driver.Rules
	if len(rules) != len(lint.Rules()) || len(run.Results) != findings {
		t.Fatalf("%d rules, %d results; want %d and %d", len(rules), len(run.Results), len(lint.Rules()), findings)
	}
	levels := map[string]bool{}
	for _, res := range run.Results {
		if rules[res.RuleIndex].ID != res.RuleID || rules[res.RuleIndex].DefaultConfiguration.Level != res.Level {
			t.Errorf("result %+v does not match rule %+v", res, rules[res.RuleIndex])
		}
		levels[res.Level] = true
	}
	if !levels["error"] || !levels["warning"] || !levels["note"] || levels["info"] {
		t.Errorf("levels used: %v", levels)
	}
	// The reference-depth finding is in references/format.md, line 3.
	found := false
	for _, res := range run.Results {
		loc := res.Locations[0].PhysicalLocation
		if res.RuleID == "reference-depth" {
			found = loc.ArtifactLocation.URI == "testdata/bad/reference-depth/references/format.md" && loc.Region != nil && loc.Region.StartLine == 3
		}
	}
	if !found {
		t.Errorf("reference-depth is not located at references/format.md:3:\n%s", buf.String())
	}

	// The schema is no rubber stamp: another version, or a result without
	// its rule, fails it.
	for _, broken := range []string{
		strings.Replace(buf.String(), `"version": "2.1.0"`, `"version": "2.0.0"`, 1),
		strings.Replace(buf.String(), `"ruleId":`, `"rule":`, 1),
	} {
		if sariftest.Validate(t, []byte(broken)) == nil {
			t.Errorf("a broken log passed the schema")
		}
	}
}

// TestSARIFLocations: paths are URI references (absolute ones file:
// URIs, reserved characters escaped), and files of an archive are inside
// it.
func TestSARIFLocations(t *testing.T) {
	f := lint.Finding{Rule: "reference-broken", Severity: lint.Warning, File: "references/a b.md", Line: 2, Message: "m"}
	for _, tc := range []struct {
		report lint.Report
		want   string
	}{
		{lint.Report{Path: "skills/x"}, "skills/x/references/a%20b.md"},
		{lint.Report{Path: "/srv/skills/x"}, "file:///srv/skills/x/references/a%20b.md"},
		{lint.Report{Path: "x.zip", Archive: true}, "x.zip%21/references/a%20b.md"},
	} {
		tc.report.Findings = []lint.Finding{f}
		var buf bytes.Buffer
		if err := lint.WriteSARIF(&buf, "v1", []lint.Report{tc.report}); err != nil {
			t.Fatal(err)
		}
		log := sariftest.Read(t, buf.Bytes())
		if got := log.Runs[0].Results[0].Locations[0].PhysicalLocation.ArtifactLocation.URI; got != tc.want {
			t.Errorf("%+v: uri %q, want %q", tc.report, got, tc.want)
		}
	}
}
