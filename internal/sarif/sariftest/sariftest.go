// Package sariftest checks SARIF logs in tests: against
// sarif-essential.schema.json, the part of SARIF 2.1.0 code-scanning tools
// read (the fields the format requires of a run, its driver, rules and
// results, and their locations), and decoded into the fields tests
// compare.
package sariftest

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:embed sarif-essential.schema.json
var schemaJSON []byte

// Log is what tests read of a SARIF log.
type Log struct {
	Version string `json:"version"`
	Runs    []struct {
		Tool struct {
			Driver struct {
				Name  string `json:"name"`
				Rules []struct {
					ID                   string `json:"id"`
					DefaultConfiguration struct {
						Level string `json:"level"`
					} `json:"defaultConfiguration"`
					Properties struct {
						SecuritySeverity string `json:"security-severity"`
					} `json:"properties"`
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

// Validate checks data against the schema.
func Validate(t testing.TB, data []byte) error {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
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
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return sch.Validate(inst)
}

// Read checks data against the schema and decodes it, failing t when it
// does not fit.
func Read(t testing.TB, data []byte) Log {
	t.Helper()
	if err := Validate(t, data); err != nil {
		t.Fatalf("the log breaks the schema: %v\n%s", err, data)
	}
	var log Log
	if err := json.Unmarshal(data, &log); err != nil {
		t.Fatal(err)
	}
	return log
}
