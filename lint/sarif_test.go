package lint_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/skilld/skilld/lint"
)

// sarifSchema compiles testdata/sarif-essential.schema.json: the shape of
// SARIF 2.1.0 that code-scanning tools read.
func sarifSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("testdata/sarif-essential.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("sarif-essential.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("sarif-essential.json")
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

type sarifLog struct {
	Version string `json:"version"`
	Runs    []struct {
		Tool struct {
			Driver struct {
				Rules []struct {
					ID                   string `json:"id"`
					DefaultConfiguration struct {
						Level string `json:"level"`
					} `json:"defaultConfiguration"`
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		Results []struct {
			RuleID    string `json:"ruleId"`
			RuleIndex int    `json:"ruleIndex"`
			Level     string `json:"level"`
			Locations []struct {
				PhysicalLocation struct {
					ArtifactLocation struct {
						URI string `json:"uri"`
					} `json:"artifactLocation"`
					Region *struct {
						StartLine int `json:"startLine"`
					} `json:"region"`
				} `json:"physicalLocation"`
			} `json:"locations"`
		} `json:"results"`
	} `json:"runs"`
}

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
	sch := sarifSchema(t)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Fatalf("the log breaks the schema: %v\n%s", err, buf.String())
	}
	var log sarifLog
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
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
		if inst, _ := jsonschema.UnmarshalJSON(strings.NewReader(broken)); sch.Validate(inst) == nil {
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
		var log sarifLog
		if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
			t.Fatal(err)
		}
		if got := log.Runs[0].Results[0].Locations[0].PhysicalLocation.ArtifactLocation.URI; got != tc.want {
			t.Errorf("%+v: uri %q, want %q", tc.report, got, tc.want)
		}
	}
}
