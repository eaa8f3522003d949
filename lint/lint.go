// Package lint reports what makes a valid skill hard for a model to select
// or to use: a description too short, too vague or without the situations
// it applies to, a SKILL.md too long to load whole, references a model
// would have to follow two levels deep, files nothing mentions, scripts
// that cannot run as they are named, syntax only one agent understands.
//
// Rules are data (ID, severity, summary) with a check function each;
// Rules lists them for documentation and SARIF output, Check runs them on
// one skill package. Validity itself is skillmd's: an invalid SKILL.md is
// one finding, and the rules that need what it would have said are skipped.
package lint

import (
	"context"
	"slices"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/skillmd"
)

// Options tune Check.
type Options struct {
	// Dir is the name of the folder that holds the skill, which its name
	// must equal; "" when there is none to compare with (an archive
	// without a top folder).
	Dir string
	// Count counts tokens as the runtime does (agent/tokenizer); the
	// size rules need it.
	Count func(string) int
}

// Check runs every rule on one skill package and returns its name (when
// SKILL.md could be read) and the findings, ordered by file and line. The
// caller sets the report's Path.
func Check(ctx context.Context, p *pack.Package, opts Options) (Report, error) {
	if opts.Count == nil {
		return Report{}, skilld.Errorf(skilld.EINVALID, "lint: Options.Count is required")
	}
	s, findings := load(p, opts)
	if s == nil {
		return Report{Findings: findings}, nil
	}
	for _, r := range Rules() {
		if err := ctx.Err(); err != nil {
			return Report{}, err
		}
		if r.check == nil {
			continue
		}
		for _, f := range r.check(s) {
			f.Rule, f.Severity = r.ID, r.Severity
			findings = append(findings, f)
		}
	}
	slices.SortStableFunc(findings, func(a, b Finding) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		return a.Line - b.Line
	})
	if findings == nil {
		findings = []Finding{}
	}
	return Report{Name: s.parsed.Name, Findings: findings}, nil
}

// Invalid is the finding on a path that holds no skill to lint (a folder
// without one, an archive that cannot be read).
func Invalid(message string) Finding {
	return Finding{Rule: ruleInvalid, Severity: Error, Message: message}
}

// Failing reports whether findings hold one of severity warning or above:
// what makes skilld lint exit 1.
func Failing(findings []Finding) bool {
	return slices.ContainsFunc(findings, func(f Finding) bool { return f.Severity.rank() >= Warning.rank() })
}

// skill is what the rules look at: the package, its SKILL.md as text and
// as parsed, and the files its text mentions.
type skill struct {
	pkg    *pack.Package
	opts   Options
	file   string // "SKILL.md" or "skill.md"
	text   string
	lines  *lineIndex
	parsed *skillmd.Skill
	// bodyLine is the line the body starts on, after the frontmatter.
	bodyLine int
	refs     *references
}

// load reads the SKILL.md of p. It returns nil, with a skill-invalid
// finding, when there is none or it cannot be parsed; a SKILL.md that
// parses but breaks a rule of the specification gets its findings and
// is linted all the same.
func load(p *pack.Package, opts Options) (*skill, []Finding) {
	name := skillmd.Filename(func(n string) bool { _, ok := p.File(n); return ok })
	if name == "" {
		return nil, []Finding{{Rule: ruleInvalid, Severity: Error, Message: "Missing required file: SKILL.md"}}
	}
	f, _ := p.File(name)
	// The name is compared with the folder by name-folder-mismatch, not
	// here, so that it is one finding with its own ID.
	r := skillmd.Check(f.Data, skillmd.Options{})
	var findings []Finding
	for _, d := range r.Errors {
		findings = append(findings, Finding{Rule: ruleInvalid, Severity: Error, File: name, Message: d.Message + " (see skilld validate)"})
	}
	if r.Skill == nil {
		return nil, findings
	}
	s := &skill{pkg: p, opts: opts, file: name, text: string(f.Data), parsed: r.Skill}
	s.lines = newLineIndex(s.text)
	s.bodyLine = bodyStart(s.text)
	s.refs = findReferences(s)
	return s, findings
}

// bodyStart returns the line after the frontmatter's closing "---".
func bodyStart(text string) int {
	n := 0
	for line := range strings.Lines(text) {
		n++
		if n > 1 && strings.TrimRight(line, " \t\r\n") == "---" {
			return n + 1
		}
	}
	return 1
}

// keyLine returns the line of a top-level frontmatter key, or 1.
func (s *skill) keyLine(key string) int {
	n := 0
	for line := range strings.Lines(s.text) {
		n++
		if n > 1 && strings.TrimRight(line, " \t\r\n") == "---" {
			break
		}
		if k, _, ok := strings.Cut(line, ":"); ok && strings.TrimRight(k, " \t") == key {
			return n
		}
	}
	return 1
}

// bodyLines calls fn with each line of the body and its number.
func (s *skill) bodyLines(fn func(n int, line string)) {
	n := 0
	for line := range strings.Lines(s.text) {
		n++
		if n >= s.bodyLine {
			fn(n, strings.TrimRight(line, "\r\n"))
		}
	}
}
