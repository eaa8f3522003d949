// Package skillmd parses and validates SKILL.md files as the open Agent Skills
// specification defines them: YAML frontmatter between two "---" lines, then a
// Markdown body. Check and Parse are pure: they read bytes handed to them
// and do no I/O; CheckDir, Find and Discover read an fs.FS, and Load and
// ParseFile read skill files from the operating system's disk.
//
// Validation follows the reference validator (skills-ref) rule for rule, with
// the same searchable words in its messages, and adds what a server needs on
// top: a lenient mode for real-world corpora, typed errors, limits on the
// frontmatter, and refusal of YAML anchors and aliases.
package skillmd

import (
	"errors"
	"fmt"
	"strings"

	"github.com/skilld/skilld"
)

// Limits of the specification, counted in runes (Unicode code points), never bytes.
const (
	MaxNameLength          = 64
	MaxDescriptionLength   = 1024
	MaxCompatibilityLength = 500
)

// MaxFrontmatterSize caps the YAML between the "---" lines. The specified
// fields fit in a few kilobytes; the cap keeps a hostile file from making the
// YAML parser do unbounded work.
const MaxFrontmatterSize = 64 << 10

// Frontmatter keys the specification allows.
const (
	FieldName          = "name"
	FieldDescription   = "description"
	FieldLicense       = "license"
	FieldCompatibility = "compatibility"
	FieldMetadata      = "metadata"
	FieldAllowedTools  = "allowed-tools"
)

// Pseudo-fields used in problems that are not about one frontmatter key.
const (
	FieldFile        = "file"
	FieldFrontmatter = "frontmatter"
)

// Client fields skilld honours.
const (
	// FieldDisableModelInvocation: true keeps the skill out of the model's
	// catalog; only a user's "/name" activates it (Claude Code).
	FieldDisableModelInvocation = "disable-model-invocation"
	// FieldUserInvocable: false refuses "/name" (Claude Code).
	FieldUserInvocable = "user-invocable"
)

// clientFields are frontmatter keys the clients people use define, beyond
// the specification, by key with the client that defines them. They are
// kept and reported as warnings, never refused, strict mode or not.
var clientFields = map[string]string{
	FieldDisableModelInvocation: "Claude Code",
	FieldUserInvocable:          "Claude Code",
	"argument-hint":             "Claude Code",
	"model":                     "Claude Code",
	"effort":                    "Claude Code",
	"context":                   "Claude Code",
	"agent":                     "Claude Code",
	"hooks":                     "Claude Code",
	"when_to_use":               "Claude Code",
}

// allowedFieldList names the allowed keys, sorted, for messages.
const allowedFieldList = "allowed-tools, compatibility, description, license, metadata, name"

func isAllowedField(key string) bool {
	switch key {
	case FieldName, FieldDescription, FieldLicense, FieldCompatibility, FieldMetadata, FieldAllowedTools:
		return true
	}
	return false
}

// Skill is the parsed content of a SKILL.md file.
type Skill struct {
	// Name is trimmed and NFKC-normalized: the form every other part of
	// skilld compares, stores and shows.
	Name          string            `json:"name"`
	Description   string            `json:"description"`
	License       string            `json:"license,omitempty"`
	Compatibility string            `json:"compatibility,omitempty"`
	Metadata      map[string]string `json:"metadata,omitempty"`
	// AllowedTools holds the space-separated entries of allowed-tools (a YAML
	// list of strings is accepted too, as the reference validator does).
	AllowedTools []string `json:"allowed_tools,omitempty"`
	// Extra holds unknown frontmatter keys, kept in lenient mode only,
	// and the clients' fields (clientFields), always kept.
	Extra map[string]any `json:"extra,omitempty"`
	// DisableModelInvocation and NoUserInvocation are read from the
	// clients' disable-model-invocation and user-invocable (false): who
	// may not activate the skill (the model; the user with "/name").
	DisableModelInvocation bool `json:"disable_model_invocation,omitempty"`
	NoUserInvocation       bool `json:"no_user_invocation,omitempty"`
	// Body is the Markdown after the frontmatter, trimmed of surrounding
	// white space.
	Body string `json:"-"`
}

// Options tune Check and Parse. The zero value is strict validation without a
// directory-name check.
type Options struct {
	// Lenient turns unknown frontmatter keys from errors into warnings and
	// keeps them in Skill.Extra.
	Lenient bool
	// Dir is the name of the directory that holds SKILL.md. When set, the
	// skill name must equal it after NFKC normalization.
	Dir string
	// LongFields turns a description or compatibility over its length
	// limit from an error into a warning. The name's limit always holds:
	// the name is an identifier.
	LongFields bool
}

// Report is the outcome of checking one SKILL.md. Skill is nil when the file
// could not be parsed at all; otherwise it holds what could be read, even when
// Errors is not empty.
type Report struct {
	Skill    *Skill
	Errors   []skilld.Detail
	Warnings []skilld.Detail
}

// Valid reports whether the file has no errors. Warnings do not count.
func (r *Report) Valid() bool { return len(r.Errors) == 0 }

func (r *Report) fail(field, format string, args ...any) {
	r.Errors = append(r.Errors, skilld.Detail{Field: field, Message: fmt.Sprintf(format, args...)})
}

func (r *Report) warn(field, format string, args ...any) {
	r.Warnings = append(r.Warnings, skilld.Detail{Field: field, Message: fmt.Sprintf(format, args...)})
}

// ErrInvalid is the cause of every error Parse returns, for errors.Is.
var ErrInvalid = errors.New("invalid SKILL.md")

// Err returns nil for a valid report, else a *skilld.Error with code EINVALID
// whose message summarizes the errors and whose details list all of them.
func (r *Report) Err() error {
	if r.Valid() {
		return nil
	}
	msg := r.Errors[0].Message
	if n := len(r.Errors) - 1; n == 1 {
		msg += " (and 1 more problem)"
	} else if n > 1 {
		msg += fmt.Sprintf(" (and %d more problems)", n)
	}
	return &skilld.Error{Code: skilld.EINVALID, Message: msg, Details: r.Errors, Err: ErrInvalid}
}

// Check parses and validates the content of a SKILL.md file and reports every
// problem it finds. The skill's strings share one copy of data.
func Check(data []byte, opts Options) *Report {
	return check(string(data), opts)
}

// check is Check of text, whose substrings the skill's strings are.
func check(text string, opts Options) *Report {
	r := &Report{}
	fm, body, ok := split(text, r)
	if !ok {
		return r
	}
	fields, ok := decodeFrontmatter(fm, r)
	if !ok {
		return r
	}
	r.Skill = validate(fields, opts, r)
	r.Skill.Body = strings.TrimSpace(body)
	return r
}

// Parse is Check for callers that want the skill or an error: it returns the
// skill and any warnings when the file is valid, and a *skilld.Error (code
// EINVALID, details listing every problem) when it is not.
func Parse(data []byte, opts Options) (*Skill, []skilld.Detail, error) {
	r := Check(data, opts)
	if err := r.Err(); err != nil {
		return nil, r.Warnings, err
	}
	return r.Skill, r.Warnings, nil
}

// Filename picks the skill file among the names present in a directory:
// "SKILL.md" is preferred and "skill.md" accepted, as the specification says.
// It returns "" when neither exists.
func Filename(exists func(name string) bool) string {
	for _, name := range [...]string{"SKILL.md", "skill.md"} {
		if exists(name) {
			return name
		}
	}
	return ""
}
