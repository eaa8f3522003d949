package scan

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/goccy/go-yaml"

	"github.com/skilld/skilld"
)

//go:embed rules/rules.yaml
var defaultRules []byte

// ErrRules is wrapped by every error about a rules file.
var ErrRules = errors.New("invalid scanner rules")

// Rule is one rule of the scanner, as its rules file states it.
type Rule struct {
	ID       string          `json:"id"`
	Severity skilld.Severity `json:"severity"`
	// Summary says what the rule catches (docs, SARIF rule descriptions);
	// Message is what each of its findings says.
	Summary string `json:"summary"`
	Message string `json:"message"`

	check    check
	files    []string
	keywords [][]byte
	match    []*regexp.Regexp
	unless   []*regexp.Regexp
}

// rulesFile is the YAML form of a rules file.
type rulesFile struct {
	Version int `yaml:"version"`
	Rules   []struct {
		ID            string          `yaml:"id"`
		Severity      skilld.Severity `yaml:"severity"`
		Check         string          `yaml:"check"`
		Summary       string          `yaml:"summary"`
		Message       string          `yaml:"message"`
		Files         []string        `yaml:"files"`
		Keywords      []string        `yaml:"keywords"`
		Patterns      []string        `yaml:"patterns"`
		Unless        []string        `yaml:"unless"`
		CaseSensitive bool            `yaml:"case_sensitive"`
	} `yaml:"rules"`
}

// ruleID is compiled on first use: a counted repetition compiles to a
// large program, which every command would otherwise build at start.
var ruleID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9-]{0,62}$`) })

// rulesVersion reads the version of a rules file alone, without the
// rules: a quarter of the work of ParseRules.
func rulesVersion(data []byte) (int, error) {
	var f struct {
		Version int `yaml:"version"`
	}
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&f); err != nil {
		return 0, rulesErr("%v", err)
	}
	return f.Version, nil
}

// ParseRules reads a rules file: a version (1 or more) and rules, each
// with an ID, a severity, a summary and a message, and either a built-in
// check or line patterns. Every mistake is an EINVALID error wrapping
// ErrRules that names the rule and the field.
func ParseRules(data []byte) (version int, rules []Rule, err error) {
	var f rulesFile
	if err := yaml.NewDecoder(bytes.NewReader(data), yaml.DisallowUnknownField()).Decode(&f); err != nil {
		return 0, nil, rulesErr("%v", err)
	}
	if f.Version < 1 {
		return 0, nil, rulesErr("version must be 1 or more, not %d", f.Version)
	}
	if len(f.Rules) == 0 {
		return 0, nil, rulesErr("no rules")
	}
	seen := map[string]bool{}
	for i, fr := range f.Rules {
		where := fmt.Sprintf("rules[%d] (%s)", i, fr.ID)
		if !ruleID().MatchString(fr.ID) {
			return 0, nil, rulesErr("rules[%d]: id %q must be lowercase letters, digits and '-'", i, fr.ID)
		}
		if seen[fr.ID] {
			return 0, nil, rulesErr("%s: id used twice", where)
		}
		seen[fr.ID] = true
		if !fr.Severity.Valid() {
			return 0, nil, rulesErr("%s: severity must be info, low, medium, high or critical, not %q", where, fr.Severity)
		}
		if fr.Summary == "" || fr.Message == "" {
			return 0, nil, rulesErr("%s: summary and message are required", where)
		}
		r := Rule{ID: fr.ID, Severity: fr.Severity, Summary: fr.Summary, Message: fr.Message, files: fr.Files}
		for _, g := range fr.Files {
			if _, err := path.Match(g, ""); err != nil {
				return 0, nil, rulesErr("%s: files: bad glob %q", where, g)
			}
		}
		switch {
		case fr.Check != "" && (len(fr.Patterns) > 0 || len(fr.Unless) > 0 || len(fr.Files) > 0 || len(fr.Keywords) > 0):
			return 0, nil, rulesErr("%s: a check takes no files, keywords, patterns or unless", where)
		case fr.Check != "":
			c, ok := builtin(fr.Check)
			if !ok {
				return 0, nil, rulesErr("%s: no built-in check %q", where, fr.Check)
			}
			r.check = c
		case len(fr.Patterns) == 0:
			return 0, nil, rulesErr("%s: needs a check or patterns", where)
		case len(fr.Keywords) == 0:
			return 0, nil, rulesErr("%s: patterns need keywords", where)
		}
		for _, k := range fr.Keywords {
			if k == "" || k != strings.ToLower(k) {
				return 0, nil, rulesErr("%s: keyword %q must be lowercase and not empty", where, k)
			}
			r.keywords = append(r.keywords, []byte(k))
		}
		flags := "(?i)"
		if fr.CaseSensitive {
			flags = ""
		}
		for _, list := range []struct {
			src []string
			dst *[]*regexp.Regexp
		}{{fr.Patterns, &r.match}, {fr.Unless, &r.unless}} {
			for _, p := range list.src {
				re, err := regexp.Compile(flags + p)
				if err != nil {
					return 0, nil, rulesErr("%s: pattern %q: %v", where, p, err)
				}
				*list.dst = append(*list.dst, re)
			}
		}
		rules = append(rules, r)
	}
	return f.Version, rules, nil
}

func rulesErr(format string, args ...any) error {
	return &skilld.Error{Code: skilld.EINVALID, Message: "scanner rules: " + fmt.Sprintf(format, args...), Err: ErrRules}
}

// selects reports whether a pattern rule reads the file at p: every text
// file when it names no globs, else a file a glob matches (the whole path
// for a glob with a "/", the file name for one without).
func (r *Rule) selects(p string) bool {
	if len(r.files) == 0 {
		return true
	}
	return slices.ContainsFunc(r.files, func(g string) bool {
		target := p
		if !strings.Contains(g, "/") {
			target = path.Base(p)
		}
		ok, _ := path.Match(g, target)
		return ok
	})
}
