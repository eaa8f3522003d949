package skillmd

import (
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
func fastFrontmatter(text string) ([]field, bool) {
	// Keys and values are substrings of text, not a copy each.
	lines := strings.Count(text, "\n")
	if !strings.HasSuffix(text, "\n") {
		lines++
	}
	var arena fastArena
	fields := make([]field, 0, min(lines, fastChunk))
	var seen map[string]bool  // made once the fields outgrow a scan
	var open *ast.MappingNode // the mapping of the last "key:" line, while indented lines follow
	var openKeys map[string]bool
	indent := 0
	lineNo := 0
	for len(text) > 0 {
		var line string
		line, text, _ = strings.Cut(text, "\n")
		lineNo++
		if len(strings.TrimRight(line, " ")) == 0 {
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
				colon := strings.IndexByte(line, ':')
				open = ast.Mapping(token.New(":", ":", &token.Position{Line: lineNo, Column: colon + 1}), false)
				f.value = open
			}
			key, value, ok := fastEntry(arena.next(lines-lineNo+1), line[sp:], lineNo, sp)
			if !ok || value == nil || openKeys[key.Value] {
				return nil, false
			}
			openKeys[key.Value] = true
			open.Values = append(open.Values, ast.MappingValue(nil, key, value))
			continue
		}
		open, indent = nil, 0
		key, value, ok := fastEntry(arena.next(lines-lineNo+1), line, lineNo, 0)
		if !ok || repeated(fields, &seen, key.Value) {
			return nil, false
		}
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

// repeated reports whether key is the key of one of fields, scanning
// them while they are few (as validation's fieldIndex does) and through
// seen, built then, after; a key it does not find is added to seen, as
// its field is about to be appended.
func repeated(fields []field, seen *map[string]bool, key string) bool {
	if len(fields) < fieldScanMax {
		for _, f := range fields {
			if f.key == key {
				return true
			}
		}
		return false
	}
	if *seen == nil {
		*seen = make(map[string]bool, 2*len(fields))
		for _, f := range fields {
			(*seen)[f.key] = true
		}
	}
	if (*seen)[key] {
		return true
	}
	(*seen)[key] = true
	return false
}

// fastScalar is what the parser allocates piece by piece for a string
// scalar (its position, token, node and the node's base), in one piece.
type fastScalar struct {
	pos  token.Position
	tok  token.Token
	base ast.BaseNode
	node ast.StringNode
}

// fastLine is a line's key and value.
type fastLine struct{ key, value fastScalar }

// fastChunk is how many lines' nodes the fast path allocates at once:
// enough for most frontmatter in one allocation, few enough that a long
// frontmatter the parser ends up reading costs little more.
const fastChunk = 8

// fastArena hands out fastLines from chunks of at most fastChunk.
type fastArena []fastLine

// next returns a fresh fastLine; left is how many lines remain, this one
// included, so a chunk is never longer than the frontmatter needs.
func (a *fastArena) next(left int) *fastLine {
	if len(*a) == 0 {
		*a = make(fastArena, max(1, min(left, fastChunk)))
	}
	l := &(*a)[0]
	*a = (*a)[1:]
	return l
}

// string makes s the node of a string token, as ast.String does (tk's
// Position must be &s.pos).
func (s *fastScalar) string(tk token.Token) *ast.StringNode {
	s.tok = tk
	s.node = ast.StringNode{BaseNode: &s.base, Token: &s.tok, Value: s.tok.Value}
	return &s.node
}

// fastEntry reads "key: value" (or "key:") at column col of line lineNo,
// building its nodes in l. The value is nil for "key:".
func fastEntry(l *fastLine, line string, lineNo, col int) (*ast.StringNode, ast.Node, bool) {
	k, rest, found := strings.Cut(line, ":")
	if !found || len(k) == 0 || !plainKey(k) {
		return nil, nil, false
	}
	l.key.pos = token.Position{Line: lineNo, Column: col + 1}
	keyTok := plainToken(k, &l.key.pos)
	if keyTok.Type != token.StringType {
		return nil, nil, false
	}
	key := l.key.string(keyTok)
	if len(rest) == 0 {
		return key, nil, true
	}
	if rest[0] != ' ' {
		return nil, nil, false
	}
	trimmed := strings.TrimLeft(rest, " ")
	v := strings.TrimRight(trimmed, " ")
	if len(v) == 0 {
		return key, nil, true
	}
	if !safeStart(v) {
		return nil, nil, false
	}
	pos := &l.value.pos
	*pos = token.Position{Line: lineNo, Column: col + len(k) + 1 + (len(rest) - len(trimmed)) + 1}
	switch v[0] {
	case '"':
		inner := v[1:]
		if len(inner) == 0 || inner[len(inner)-1] != '"' || strings.ContainsAny(inner[:len(inner)-1], "\"\\") || hasControl(inner) {
			return nil, nil, false
		}
		return key, l.value.string(*token.DoubleQuote(inner[:len(inner)-1], v, pos)), true
	case '\'':
		inner := v[1:]
		if len(inner) == 0 || inner[len(inner)-1] != '\'' || strings.Contains(inner[:len(inner)-1], "'") || hasControl(inner) {
			return nil, nil, false
		}
		return key, l.value.string(*token.SingleQuote(inner[:len(inner)-1], v, pos)), true
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
	return key, l.value.string(tk), true
}

// plainKey accepts the keys skills use: a letter, then letters, digits,
// '-' and '_'.
func plainKey(k string) bool {
	if !(k[0] >= 'a' && k[0] <= 'z' || k[0] >= 'A' && k[0] <= 'Z') {
		return false
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// safeStart refuses values starting with a character YAML gives meaning
// to there that needsParser does not know.
func safeStart(v string) bool {
	// A plain scalar may not start with an indicator; IsNeedQuoted knows
	// most of them, these are the rest.
	switch v[0] {
	case '-', '?', ':', '#', '[', ']', '{', '}', ',':
		return false
	}
	return true
}

// hasControl reports control characters (tabs included), which the fast
// path does not reason about.
func hasControl(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c == 0x7f {
			return true
		}
	}
	return false
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
// token's type. A control character anywhere sends it to the parser too,
// in the same pass.
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
		switch c := v[i]; c {
		case '#', '\\':
			return true
		case ':', '-':
			if i+1 < len(v) && v[i+1] == ' ' {
				return true
			}
		default:
			if c < 0x20 || c == 0x7f {
				return true // a control character: see hasControl
			}
		}
	}
	return false
}

// plainToken is token.New for a plain scalar, without token.New's cost
// where the answer is known: a value that starts with neither a digit,
// a sign nor '.' is never a number, so unless it is one of YAML's
// reserved words (null, booleans: .inf and .nan start with '.') it is a
// string. token.New would try it as a number anyway, allocating a
// strconv error for every string, and look it up among the reserved
// words.
func plainToken(v string, pos *token.Position) token.Token {
	switch c := v[0]; {
	case c >= '0' && c <= '9', c == '+', c == '-', c == '.', maybeReserved(v):
		return *token.New(v, v, pos)
	}
	return *token.String(v, v, pos)
}

// maybeReserved reports whether v may be one of YAML's reserved words
// that do not start with '.' or '-': null, true and false in any case
// (a superset of the ones the parser knows), and "~".
func maybeReserved(v string) bool {
	return v == "~" || strings.EqualFold(v, "null") || strings.EqualFold(v, "true") || strings.EqualFold(v, "false")
}
