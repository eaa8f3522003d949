// Package scan is skilld's static security scanner for skill packages. It
// reads every file of a package against a versioned set of rules (data, in
// rules/rules.yaml) and reports what a reviewer should look at before an
// agent runs the skill: hidden Unicode, instructions aimed at the agent,
// commands a client runs at load, downloads piped into shells, encoded
// payloads, reads of credentials, undeclared network calls, binaries and
// archives. It never runs anything it reads.
package scan

import (
	"bytes"
	"context"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
)

// Scanner scans packages with one version of the rules.
type Scanner struct {
	// src, when set, is a rules file known to be good (the embedded
	// one), parsed on the scanner's first use rather than when it is
	// made: the server makes its scanner at start and may never scan.
	// srcVersion reads its version alone, which is all the server's
	// look for stale scans at start needs.
	src        []byte
	srcVersion func() int
	parse      sync.Once
	version    int
	rules      []Rule
}

// New returns a scanner over a rules file (ParseRules).
func New(rulesFile []byte) (*Scanner, error) {
	v, rules, err := ParseRules(rulesFile)
	if err != nil {
		return nil, err
	}
	return &Scanner{version: v, rules: rules}, nil
}

// Default returns the scanner over the rules skilld ships, parsed on its
// first use. The rules file is embedded and tested (TestDefaultRules), so
// a failure to parse it is a build mistake, and panics.
func Default() *Scanner {
	return &Scanner{src: defaultRules, srcVersion: sync.OnceValue(func() int {
		v, err := rulesVersion(defaultRules)
		if err != nil {
			panic(err)
		}
		return v
	})}
}

// ready parses the rules of a Default scanner once; a scanner from New
// has them already.
func (s *Scanner) ready() *Scanner {
	s.parse.Do(func() {
		if s.src == nil {
			return
		}
		_, rules, err := ParseRules(s.src)
		if err != nil {
			panic(err)
		}
		s.rules = rules
	})
	return s
}

// Version is the version of the scanner's rules: a scan stored under
// another version is stale.
func (s *Scanner) Version() int {
	if s.srcVersion != nil {
		return s.srcVersion()
	}
	return s.version
}

// Rules lists the scanner's rules in the order of its rules file.
func (s *Scanner) Rules() []Rule { return slices.Clone(s.ready().rules) }

// maxLineScan bounds the bytes of one line the pattern rules read: a
// minified script's single line would otherwise be matched whole by every
// pattern, and whatever hides past this many bytes of one line is still
// caught by the character checks, which read everything.
const maxLineScan = 16 << 10

// Scan reads every file of pkg and returns the findings ordered by file,
// line and rule. Findings are data about the package; the error is only
// ctx's.
func (s *Scanner) Scan(ctx context.Context, pkg *pack.Package) ([]skilld.Finding, error) {
	s.ready()
	files := pkg.Files()
	u := &unit{files: files, decl: readDeclaration(pkg)}
	var out []skilld.Finding
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		text := isText(f.Data)
		var lower []byte
		if text {
			lower = asciiLower(f.Data)
		}
		for i := range s.rules {
			r := &s.rules[i]
			var found []skilld.Finding
			switch {
			case r.check != nil:
				found = r.check(u, f, text)
			case text && r.selects(f.Path) && hasKeyword(lower, r.keywords):
				found = matchLines(r, f.Data, lower)
			}
			for _, fd := range found {
				fd.Rule, fd.Severity, fd.File = r.ID, r.Severity, f.Path
				if fd.Message == "" {
					fd.Message = r.Message
				}
				out = append(out, fd)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b skilld.Finding) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return strings.Compare(a.Rule, b.Rule)
	})
	if out == nil {
		out = []skilld.Finding{}
	}
	return out, nil
}

// unit is what the checks share about the package being scanned.
type unit struct {
	files []pack.File
	decl  declaration
}

// matchLines reports each line of data that holds one of r's keywords
// (looked for in lower, data with ASCII lowercased, so offsets agree),
// matches one of its patterns and none of its unless patterns.
func matchLines(r *Rule, data, lower []byte) []skilld.Finding {
	var out []skilld.Finding
	off := 0
	for n, line := range lines(data) {
		start := off
		off += len(line) + 1
		if start < len(data) && bytes.HasPrefix(data[start+len(line):], []byte("\r\n")) {
			off++
		}
		if len(line) > maxLineScan {
			line = line[:maxLineScan]
		}
		if !hasKeyword(lower[start:start+len(line)], r.keywords) {
			continue
		}
		for _, re := range r.match {
			loc := re.FindIndex(line)
			if loc == nil {
				continue
			}
			if !slices.ContainsFunc(r.unless, func(u *regexp.Regexp) bool { return u.Match(line) }) {
				out = append(out, skilld.Finding{Line: n, Excerpt: excerpt(line, loc[0], loc[1])})
			}
			break
		}
	}
	return out
}

func hasKeyword(text []byte, keywords [][]byte) bool {
	return slices.ContainsFunc(keywords, func(k []byte) bool { return bytes.Contains(text, k) })
}

// asciiLower lowercases ASCII letters only, so every byte keeps its
// offset (Unicode case mapping can change lengths).
func asciiLower(data []byte) []byte {
	out := make([]byte, len(data))
	for i, c := range data {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}

// lines yields each line of data with its 1-based number, without the
// line ending.
func lines(data []byte) func(yield func(int, []byte) bool) {
	return func(yield func(int, []byte) bool) {
		n := 0
		for len(data) > 0 {
			n++
			line := data
			if i := bytes.IndexByte(data, '\n'); i >= 0 {
				line, data = data[:i], data[i+1:]
			} else {
				data = nil
			}
			if !yield(n, bytes.TrimSuffix(line, []byte{'\r'})) {
				return
			}
		}
	}
}

// isText reports whether data reads as text: no NUL byte and valid UTF-8
// in its first 8 KiB (a cut rune at the end allowed).
func isText(data []byte) bool {
	head := data[:min(len(data), 8<<10)]
	if bytes.IndexByte(head, 0) >= 0 {
		return false
	}
	for i := 0; i < len(head); {
		r, size := utf8.DecodeRune(head[i:])
		if r == utf8.RuneError && size == 1 {
			return len(head) < len(data) && len(head)-i < utf8.UTFMax && !utf8.FullRune(head[i:])
		}
		i += size
	}
	return true
}

// ext is a file's extension, lowercase, without the dot.
func ext(p string) string {
	return strings.ToLower(strings.TrimPrefix(path.Ext(p), "."))
}
