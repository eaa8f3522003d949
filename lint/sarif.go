package lint

import (
	"encoding/json"
	"io"
	"net/url"
	"path"
)

// SARIF 2.1.0 (OASIS), the part of it code-scanning tools read: one run,
// the tool with its rules, and results with a rule, a level, a message and
// a location.
const (
	sarifVersion = "2.1.0"
	sarifSchema  = "https://json.schemastore.org/sarif-2.1.0.json"
)

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name    string      `json:"name"`
	Version string      `json:"version,omitempty"`
	Rules   []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID                   string       `json:"id"`
	ShortDescription     sarifText    `json:"shortDescription"`
	DefaultConfiguration sarifRuleCfg `json:"defaultConfiguration"`
}

type sarifRuleCfg struct {
	Level string `json:"level"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID    string          `json:"ruleId"`
	RuleIndex int             `json:"ruleIndex"`
	Level     string          `json:"level"`
	Message   sarifText       `json:"message"`
	Locations []sarifLocation `json:"locations"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
}

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
	driver := sarifDriver{Name: "skilld lint", Version: toolVersion, Rules: make([]sarifRule, len(rules))}
	for i, r := range rules {
		index[r.ID] = i
		driver.Rules[i] = sarifRule{ID: r.ID, ShortDescription: sarifText{r.Summary}, DefaultConfiguration: sarifRuleCfg{sarifLevel(r.Severity)}}
	}
	run := sarifRun{Tool: sarifTool{Driver: driver}, Results: []sarifResult{}}
	for _, rep := range reports {
		for _, f := range rep.Findings {
			loc := sarifPhysical{ArtifactLocation: sarifArtifact{URI: sarifURI(rep.Location(f))}}
			if f.Line > 0 {
				loc.Region = &sarifRegion{StartLine: f.Line}
			}
			run.Results = append(run.Results, sarifResult{RuleID: f.Rule, RuleIndex: index[f.Rule], Level: sarifLevel(f.Severity),
				Message: sarifText{f.Message}, Locations: []sarifLocation{{PhysicalLocation: loc}}})
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(sarifLog{Schema: sarifSchema, Version: sarifVersion, Runs: []sarifRun{run}})
}

// sarifURI writes a location as a URI reference: relative paths as they
// are, absolute ones as file: URIs, with the characters URIs reserve
// escaped.
func sarifURI(loc string) string {
	u := url.URL{Path: loc}
	if path.IsAbs(loc) {
		u.Scheme = "file"
	}
	return u.String()
}
