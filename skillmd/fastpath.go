package skillmd

import (
	"bytes"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// fastFrontmatter reads the flat frontmatter nearly every skill has —
// top-level "key: value" lines with plain or simply quoted string values,
// and at most one level of such lines under a key (metadata) — without the
// YAML parser, which costs ~20 µs a file. It builds the same nodes the
// parser would, so validation cannot tell the two apart. Anything else —
// comments, lists, block scalars, continuation lines, escapes, a value
// YAML would read as a number, boolean, null or date, a repeated key —
// returns false, and the parser decides. FuzzFastPath checks, input by
// input, that the two paths agree.
func fastFrontmatter(fm []byte) ([]field, bool) {
	var fields []field
	seen := map[string]bool{}
	var open *ast.MappingNode // the mapping of the last "key:" line, while indented lines follow
	var openKeys map[string]bool
	indent := 0
	lineNo := 0
	for len(fm) > 0 {
		var line []byte
		line, fm, _ = bytes.Cut(fm, []byte("\n"))
		lineNo++
		if len(bytes.TrimRight(line, " ")) == 0 {
			if len(line) > 0 {
				return nil, false // a line of spaces: let the parser judge
			}
			continue
		}
		sp := 0
		for sp < len(line) && line[sp] == ' ' {
			sp++
		}
		if sp > 0 {
			// An entry of the mapping that the last top-level key opened.
			if len(fields) == 0 || (open == nil && fields[len(fields)-1].value != nil) || (indent != 0 && sp != indent) {
				return nil, false
			}
			f := &fields[len(fields)-1]
			if open == nil {
				indent = sp
				openKeys = map[string]bool{}
				// The parser's mapping starts at its first entry's ':'.
				colon := bytes.IndexByte(line, ':')
				open = ast.Mapping(token.New(":", ":", &token.Position{Line: lineNo, Column: colon + 1}), false)
				f.value = open
			}
			key, value, ok := fastEntry(line[sp:], lineNo, sp)
			if !ok || value == nil || openKeys[key.Value] {
				return nil, false
			}
			openKeys[key.Value] = true
			open.Values = append(open.Values, ast.MappingValue(nil, key, value))
			continue
		}
		open, indent = nil, 0
		key, value, ok := fastEntry(line, lineNo, 0)
		if !ok || seen[key.Value] {
			return nil, false
		}
		seen[key.Value] = true
		f := field{key: key.Value, line: lineNo + 1}
		if value != nil {
			f.value = value
		}
		fields = append(fields, f)
	}
	if len(fields) == 0 {
		return nil, false
	}
	// A "key:" that opened nothing is null, as the parser has it; one that
	// opened a mapping holds it.
	return fields, true
}

// fastEntry reads "key: value" (or "key:") at column col of line lineNo.
// The value is nil for "key:".
func fastEntry(line []byte, lineNo, col int) (*ast.StringNode, ast.Node, bool) {
	k, rest, found := bytes.Cut(line, []byte(":"))
	if !found || len(k) == 0 || !plainKey(k) {
		return nil, nil, false
	}
	keyTok := plainToken(string(k), &token.Position{Line: lineNo, Column: col + 1})
	if keyTok.Type != token.StringType {
		return nil, nil, false
	}
	key := ast.String(keyTok)
	if len(rest) == 0 {
		return key, nil, true
	}
	if rest[0] != ' ' {
		return nil, nil, false
	}
	trimmed := bytes.TrimLeft(rest, " ")
	if len(bytes.TrimRight(trimmed, " ")) == 0 {
		return key, nil, true
	}
	v := string(bytes.TrimRight(trimmed, " "))
	pos := &token.Position{Line: lineNo, Column: col + len(k) + 1 + (len(rest) - len(trimmed)) + 1}
	if !safeText(v) {
		return nil, nil, false
	}
	switch v[0] {
	case '"':
		inner := v[1:]
		if len(inner) == 0 || inner[len(inner)-1] != '"' || strings.ContainsAny(inner[:len(inner)-1], "\"\\") {
			return nil, nil, false
		}
		return key, ast.String(token.DoubleQuote(inner[:len(inner)-1], v, pos)), true
	case '\'':
		inner := v[1:]
		if len(inner) == 0 || inner[len(inner)-1] != '\'' || strings.Contains(inner[:len(inner)-1], "'") {
			return nil, nil, false
		}
		return key, ast.String(token.SingleQuote(inner[:len(inner)-1], v, pos)), true
	}
	if simpleNumber(v) {
		// "version: 1.0": YAML reads a number, which metadata keeps as
		// written.
		switch tk := token.New(v, v, pos); tk.Type {
		case token.IntegerType:
			return key, ast.Integer(tk), true
		case token.FloatType:
			return key, ast.Float(tk), true
		}
		return nil, nil, false
	}
	if needsParser(v) {
		return nil, nil, false
	}
	tk := plainToken(v, pos)
	if tk.Type != token.StringType {
		return nil, nil, false
	}
	return key, ast.String(tk), true
}

// plainKey accepts the keys skills use: a letter, then letters, digits,
// '-' and '_'.
func plainKey(k []byte) bool {
	if !(k[0] >= 'a' && k[0] <= 'z' || k[0] >= 'A' && k[0] <= 'Z') {
		return false
	}
	for _, c := range k {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// safeText refuses what the fast path does not reason about: control
// characters (tabs included), and values starting with a character YAML
// gives meaning to there.
func safeText(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < 0x20 || c == 0x7f {
			return false
		}
	}
	// A plain scalar may not start with an indicator; IsNeedQuoted knows
	// most of them, these are the rest.
	switch v[0] {
	case '-', '?', ':', '#', '[', ']', '{', '}', ',':
		return false
	}
	return true
}

// simpleNumber matches decimal integers and decimals without a leading
// zero, exponent or sign: the numbers metadata versions are written as.
func simpleNumber(v string) bool {
	dot := false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c >= '0' && c <= '9':
		case c == '.' && !dot && i > 0 && i < len(v)-1:
			dot = true
		default:
			return false
		}
	}
	return v[0] != '0' || len(v) == 1 || v[1] == '.'
}

// needsParser reports whether a plain value may mean something other than
// its text: token.IsNeedQuoted's rules, except that any value starting
// with a digit, '+' or '.' is left to the parser instead of being matched
// against every timestamp layout (a third of the fast path's time went to
// time.Parse). Reserved words and numbers are caught after, by the
// token's type.
func needsParser(v string) bool {
	switch c := v[0]; {
	case c >= '0' && c <= '9', c == '+', c == '.':
		return true
	}
	switch v[0] {
	case '*', '&', '[', '{', '}', ']', ',', '!', '|', '>', '%', '\'', '"', '@', ' ', '`':
		return true
	}
	switch v[len(v)-1] {
	case ':', ' ':
		return true
	}
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '#', '\\':
			return true
		case ':', '-':
			if i+1 < len(v) && v[i+1] == ' ' {
				return true
			}
		}
	}
	return false
}

// plainToken is token.New for a plain scalar that needsParser let through
// (it starts with neither a digit nor a sign nor '.'). Only YAML's
// reserved words — null, booleans, .inf and .nan, none longer than five
// bytes — can then be anything but a string, so longer values skip
// token.New's number parsing, which allocates an error for every string.
func plainToken(v string, pos *token.Position) *token.Token {
	if len(v) > 5 {
		return token.String(v, v, pos)
	}
	return token.New(v, v, pos)
}
