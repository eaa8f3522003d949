package skillmd

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

const utf8BOM = "\xEF\xBB\xBF"

// split separates the frontmatter from the body. The file must be UTF-8 and
// start with a "---" line at byte 0 (after an optional byte order mark, which
// is reported as a warning); the frontmatter ends at the next line that is
// exactly "---". Trailing spaces and a CR before the newline are tolerated on
// both delimiter lines, so CRLF files parse the same as LF files. Both parts
// are substrings of text.
func split(text string, r *Report) (frontmatter, body string, ok bool) {
	if !utf8.ValidString(text) {
		r.fail(FieldFile, "SKILL.md is not valid UTF-8 (first invalid byte at offset %d)", invalidUTF8Offset(text))
		return "", "", false
	}
	if strings.HasPrefix(text, utf8BOM) {
		r.warn(FieldFile, "SKILL.md starts with a UTF-8 byte order mark; it was ignored, but some tools will not accept it")
		text = text[len(utf8BOM):]
	}
	first, rest, _ := strings.Cut(text, "\n")
	if !isDelimiter(first) {
		r.fail(FieldFrontmatter, "SKILL.md must start with YAML frontmatter (---) on its first line")
		return "", "", false
	}
	start := len(text) - len(rest)
	for off := start; off < len(text); {
		if off-start > MaxFrontmatterSize {
			break
		}
		line, _, found := strings.Cut(text[off:], "\n")
		if isDelimiter(line) {
			next := off + len(line)
			if found {
				next++
			}
			return text[start:off], text[next:], true
		}
		if !found {
			break
		}
		off += len(line) + 1
	}
	if len(text)-start > MaxFrontmatterSize {
		r.fail(FieldFrontmatter, "SKILL.md frontmatter exceeds %d bytes", MaxFrontmatterSize)
		return "", "", false
	}
	r.fail(FieldFrontmatter, "SKILL.md frontmatter not properly closed with ---")
	return "", "", false
}

func isDelimiter(line string) bool {
	return strings.TrimRight(line, " \t\r") == "---"
}

func invalidUTF8Offset(s string) int {
	for i := 0; i < len(s); {
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(s)
}

// field is one top-level frontmatter entry, in file order.
type field struct {
	key   string
	value ast.Node // nil for an empty value ("key:")
	line  int
}

// decodeFrontmatter parses the YAML and returns its top-level entries. It
// refuses anything that is not a single mapping with scalar keys, and any
// anchor or alias: skill frontmatter never needs them, and refusing them
// removes alias-expansion bombs without having to bound them.
func decodeFrontmatter(fm string, r *Report) ([]field, bool) {
	if strings.IndexByte(fm, '\r') >= 0 {
		fm = strings.ReplaceAll(fm, "\r\n", "\n")
	}
	if fields, ok := fastFrontmatter(fm); ok {
		return fields, true
	}
	return parseFrontmatter(fm, r)
}

// parseFrontmatter is decodeFrontmatter through the YAML parser.
func parseFrontmatter(fm string, r *Report) ([]field, bool) {
	// parser.ParseBytes would copy fm into a string to tokenize it.
	file, err := parser.Parse(lexer.Tokenize(fm), 0)
	if err != nil {
		r.fail(FieldFrontmatter, "Invalid YAML in frontmatter: %s", yamlErrorText(err))
		return nil, false
	}
	var root ast.Node
	for _, doc := range file.Docs {
		if doc.Body == nil {
			continue
		}
		if root != nil {
			r.fail(FieldFrontmatter, "Invalid YAML in frontmatter: more than one YAML document")
			return nil, false
		}
		root = doc.Body
	}
	if root != nil {
		var bad ast.Node
		ast.Walk(visitFunc(func(n ast.Node) bool {
			switch n.(type) {
			case *ast.AnchorNode, *ast.AliasNode, *ast.MergeKeyNode:
				bad = n
				return false
			}
			return bad == nil
		}), root)
		if bad != nil {
			r.fail(FieldFrontmatter, "Invalid YAML in frontmatter: anchors, aliases and merge keys are not allowed (line %d)", fileLine(bad))
			return nil, false
		}
	}
	m, ok := root.(*ast.MappingNode)
	if !ok {
		r.fail(FieldFrontmatter, "SKILL.md frontmatter must be a YAML mapping of keys to values")
		return nil, false
	}
	fields := make([]field, 0, len(m.Values))
	for _, mv := range m.Values {
		key, ok := scalarKey(mv.Key)
		if !ok {
			r.fail(FieldFrontmatter, "Invalid YAML in frontmatter: keys must be plain strings (line %d)", fileLine(mv.Key))
			return nil, false
		}
		value := mv.Value
		if _, null := value.(*ast.NullNode); null {
			value = nil
		}
		fields = append(fields, field{key: key, value: value, line: fileLine(mv.Key)})
	}
	return fields, true
}

type visitFunc func(ast.Node) bool

func (f visitFunc) Visit(n ast.Node) ast.Visitor {
	if f(n) {
		return f
	}
	return nil
}

// scalarKey returns the text of a mapping key that is a plain scalar.
func scalarKey(k ast.MapKeyNode) (string, bool) {
	switch k.(type) {
	case *ast.StringNode, *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.NullNode,
		*ast.InfinityNode, *ast.NanNode:
		return literal(k), true
	}
	return "", false
}

// literal returns a scalar as it was written (without quotes), so that
// "version: 1.0" yields "1.0" and not a reformatted float.
func literal(n ast.Node) string {
	switch v := n.(type) {
	case *ast.StringNode:
		return v.Value
	case *ast.LiteralNode:
		return v.Value.Value
	case *ast.TagNode:
		return literal(v.Value)
	}
	if _, null := n.(*ast.NullNode); null {
		// "key:", "key: ~" and "key: null" all mean no value; the parser
		// gives the first a made-up "null" token, so they are told apart
		// by nothing reliable.
		return ""
	}
	if tk := n.GetToken(); tk != nil {
		return tk.Value
	}
	return ""
}

// stringValue returns the value of a YAML string scalar, and false for
// anything else (numbers, booleans, null, collections).
func stringValue(n ast.Node) (string, bool) {
	switch v := n.(type) {
	case *ast.StringNode:
		return v.Value, true
	case *ast.LiteralNode:
		return v.Value.Value, true
	case *ast.TagNode:
		if v.Start != nil && v.Start.Value == "!!str" {
			return literal(v.Value), true
		}
	}
	return "", false
}

// kind names a node's YAML type for messages.
func kind(n ast.Node) string {
	switch n.(type) {
	case nil, *ast.NullNode:
		return "null"
	case *ast.StringNode, *ast.LiteralNode:
		return "string"
	case *ast.IntegerNode:
		return "integer"
	case *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return "number"
	case *ast.BoolNode:
		return "boolean"
	case *ast.MappingNode:
		return "mapping"
	case *ast.SequenceNode:
		return "list"
	case *ast.TagNode:
		return "tagged value"
	}
	return "value"
}

// toValue converts a node to plain Go values (maps, slices, scalars) for
// Skill.Extra. Anchors and aliases were refused earlier, so this is bounded
// by the size of the frontmatter.
func toValue(n ast.Node) any {
	if n == nil {
		return nil
	}
	var v any
	if err := yaml.NodeToValue(n, &v); err != nil {
		return n.String()
	}
	return v
}

// fileLine converts a frontmatter line number into a SKILL.md line number:
// the frontmatter starts on the file's second line.
func fileLine(n ast.Node) int {
	if n == nil {
		return 0
	}
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		return tk.Position.Line + 1
	}
	return 0
}

func yamlErrorText(err error) string {
	var ye interface {
		GetToken() *token.Token
		GetMessage() string
	}
	if errors.As(err, &ye) {
		msg := ye.GetMessage()
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			return fmt.Sprintf("line %d column %d: %s", tk.Position.Line+1, tk.Position.Column, msg)
		}
		return msg
	}
	text, _, _ := strings.Cut(err.Error(), "\n")
	return text
}
