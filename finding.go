package skilld

import "time"

// Severity is how much a scanner finding matters, from info to critical.
type Severity string

const (
	SeverityInfo     Severity = "info"
	SeverityLow      Severity = "low"
	SeverityMedium   Severity = "medium"
	SeverityHigh     Severity = "high"
	SeverityCritical Severity = "critical"
)

// Rank orders severities (info 1 … critical 5; 0 when invalid).
func (s Severity) Rank() int {
	switch s {
	case SeverityInfo:
		return 1
	case SeverityLow:
		return 2
	case SeverityMedium:
		return 3
	case SeverityHigh:
		return 4
	case SeverityCritical:
		return 5
	}
	return 0
}

// Valid reports whether s is a known severity.
func (s Severity) Valid() bool { return s.Rank() > 0 }

// Finding is one thing the package scanner reports about a file of a
// package: which rule, how severe, where (Line 0 for the whole file) and a
// short excerpt with hidden characters made visible.
type Finding struct {
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	File     string   `json:"file"`
	Line     int      `json:"line"`
	Message  string   `json:"message"`
	Excerpt  string   `json:"excerpt,omitempty"`
}

// PackageScan is what the scanner found in a package under one version of
// its rules. Packages are immutable, so a scan is redone only when the
// rules change.
type PackageScan struct {
	Digest       string    `json:"digest"`
	RulesVersion int       `json:"rules_version"`
	Findings     []Finding `json:"findings"`
	ScannedAt    time.Time `json:"scanned_at"`
}

// Worst is the highest severity among the findings, "" when there are none.
func (p *PackageScan) Worst() Severity {
	var worst Severity
	for _, f := range p.Findings {
		if f.Severity.Rank() > worst.Rank() {
			worst = f.Severity
		}
	}
	return worst
}
