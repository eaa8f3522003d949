// Package sarif writes SARIF 2.1.0 (OASIS) logs, the part of the format
// code-scanning tools read: one run, the tool with its rules, and results
// with a rule, a level, a message and a location. skilld lint and the
// package scanner's findings both print through it.
package sarif

import (
	"encoding/json"
	"io"
	"net/url"
	"path"
)

// Version and Schema identify the format written.
const (
	Version = "2.1.0"
	Schema  = "https://json.schemastore.org/sarif-2.1.0.json"
)

type log struct {
	Schema  string `json:"$schema"`
	Version string `json:"version"`
	Runs    []run  `json:"runs"`
}

type run struct {
	Tool    tool     `json:"tool"`
	Results []Result `json:"results"`
}

type tool struct {
	Driver Driver `json:"driver"`
}

// Driver is the tool that ran and every rule it has.
type Driver struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	Rules   []Rule `json:"rules"`
}

// Rule is one rule of the driver; Level is its default level (error,
// warning or note).
type Rule struct {
	ID                   string          `json:"id"`
	ShortDescription     Text            `json:"shortDescription"`
	DefaultConfiguration RuleConfig      `json:"defaultConfiguration"`
	Properties           *RuleProperties `json:"properties,omitempty"`
}

type RuleConfig struct {
	Level string `json:"level"`
}

// RuleProperties are the properties code-scanning services read of a
// rule: tags, and a security severity from 0.0 to 10.0 (GitHub ranks
// security alerts by it).
type RuleProperties struct {
	Tags             []string `json:"tags,omitempty"`
	SecuritySeverity string   `json:"security-severity,omitempty"`
}

type Text struct {
	Text string `json:"text"`
}

// Result is one finding: its rule by ID and by index into the driver's
// rules, a level, a message, where.
type Result struct {
	RuleID    string     `json:"ruleId"`
	RuleIndex int        `json:"ruleIndex"`
	Level     string     `json:"level"`
	Message   Text       `json:"message"`
	Locations []Location `json:"locations"`
}

type Location struct {
	PhysicalLocation Physical `json:"physicalLocation"`
}

type Physical struct {
	ArtifactLocation Artifact `json:"artifactLocation"`
	Region           *Region  `json:"region,omitempty"`
}

type Artifact struct {
	URI string `json:"uri"`
}

type Region struct {
	StartLine int `json:"startLine"`
}

// At locates a result at loc (a path, see URI), at line when it is 1 or
// more.
func At(loc string, line int) []Location {
	p := Physical{ArtifactLocation: Artifact{URI: URI(loc)}}
	if line > 0 {
		p.Region = &Region{StartLine: line}
	}
	return []Location{{PhysicalLocation: p}}
}

// Write writes one log of one run of driver with results, indented.
func Write(w io.Writer, driver Driver, results []Result) error {
	if results == nil {
		results = []Result{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(log{Schema: Schema, Version: Version, Runs: []run{{Tool: tool{Driver: driver}, Results: results}}})
}

// URI writes a location as a URI reference: relative paths as they are,
// absolute ones as file: URIs, with the characters URIs reserve escaped.
func URI(loc string) string {
	u := url.URL{Path: loc}
	if path.IsAbs(loc) {
		u.Scheme = "file"
	}
	return u.String()
}
