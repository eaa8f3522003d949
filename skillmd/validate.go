package skillmd

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/goccy/go-yaml/ast"
	"golang.org/x/text/unicode/norm"
)

// validate applies the specification's rules to the decoded entries, in the
// reference validator's order, and fills a Skill with what it could read.
func validate(fields []field, opts Options, r *Report) *Skill {
	s := &Skill{}
	byKey := indexFields(fields)
	var unknown, client []string
	for _, f := range fields {
		switch {
		case isAllowedField(f.key):
		case clientFields[f.key] != "":
			client = append(client, f.key)
		default:
			unknown = append(unknown, f.key)
		}
	}
	if len(client) > 0 {
		// Fields the clients people use define: never fatal, kept, and
		// the ones skilld honours read.
		if s.Extra == nil {
			s.Extra = make(map[string]any, len(client))
		}
		var named []string
		for _, k := range client {
			s.Extra[k] = toValue(byKey.get(k).value)
			named = append(named, k+" ("+clientFields[k]+")")
		}
		r.warn(FieldFrontmatter, "Client fields in frontmatter, kept: %s", strings.Join(named, ", "))
		s.DisableModelInvocation = boolField(byKey, FieldDisableModelInvocation, false, r)
		s.NoUserInvocation = !boolField(byKey, FieldUserInvocable, true, r)
	}
	if len(unknown) > 0 {
		msg := fmt.Sprintf("Unexpected fields in frontmatter: %s. Only %s are allowed", strings.Join(unknown, ", "), allowedFieldList)
		if opts.Lenient {
			r.warn(FieldFrontmatter, "%s; kept as extra fields (lenient mode)", msg)
			if s.Extra == nil {
				s.Extra = make(map[string]any, len(unknown))
			}
			for _, k := range unknown {
				s.Extra[k] = toValue(byKey.get(k).value)
			}
		} else {
			r.fail(FieldFrontmatter, "%s", msg)
		}
	}

	if f, ok := byKey.lookup(FieldName); !ok {
		r.fail(FieldName, "Missing required field in frontmatter: name")
	} else {
		s.Name = validateName(f.value, opts.Dir, r)
	}
	if f, ok := byKey.lookup(FieldDescription); !ok {
		r.fail(FieldDescription, "Missing required field in frontmatter: description")
	} else {
		s.Description = validateDescription(f.value, opts.LongFields, r)
	}
	if f, ok := byKey.lookup(FieldLicense); ok && f.value != nil {
		if v, ok := stringValue(f.value); ok {
			s.License = strings.TrimSpace(v)
		} else {
			r.fail(FieldLicense, "Field 'license' must be a string, not a %s", kind(f.value))
		}
	}
	if f, ok := byKey.lookup(FieldCompatibility); ok {
		s.Compatibility = validateCompatibility(f.value, opts.LongFields, r)
	}
	if f, ok := byKey.lookup(FieldAllowedTools); ok {
		s.AllowedTools = validateAllowedTools(f.value, r)
	}
	if f, ok := byKey.lookup(FieldMetadata); ok {
		s.Metadata = validateMetadata(f.value, opts.Lenient, r)
	}
	return s
}

// NormalizeName returns the form of a skill name that rules are checked on
// and that skilld stores: trimmed and NFKC-normalized.
func NormalizeName(name string) string {
	return norm.NFKC.String(strings.TrimSpace(name))
}

func validateName(n ast.Node, dir string, r *Report) string {
	raw, ok := stringValue(n)
	if !ok && n != nil {
		r.fail(FieldName, "Field 'name' must be a non-empty string, not a %s", kind(n))
		return ""
	}
	if strings.TrimSpace(raw) == "" {
		r.fail(FieldName, "Field 'name' must be a non-empty string")
		return ""
	}
	name := NormalizeName(raw)
	for _, p := range NameProblems(name) {
		r.fail(FieldName, "%s", p)
	}
	if dir != "" {
		if d := norm.NFKC.String(dir); d != name {
			r.fail(FieldName, "Directory name '%s' must match skill name '%s'", dir, name)
		}
	}
	return name
}

// NameProblems returns every rule a normalized skill name breaks (none for a
// valid name). Letters and digits are Unicode-aware: "навык" and "技能" are
// valid names, "НАВЫК" is not lowercase.
func NameProblems(name string) []string {
	var problems []string
	if n := utf8.RuneCountInString(name); n > MaxNameLength {
		problems = append(problems, fmt.Sprintf("Skill name '%s' exceeds %d character limit (%d chars)", name, MaxNameLength, n))
	}
	if name != strings.ToLower(name) {
		problems = append(problems, fmt.Sprintf("Skill name '%s' must be lowercase", name))
	}
	if strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-") {
		problems = append(problems, "Skill name cannot start or end with a hyphen")
	}
	if strings.Contains(name, "--") {
		problems = append(problems, "Skill name cannot contain consecutive hyphens")
	}
	var bad []string
	for _, c := range name {
		if c != '-' && !unicode.IsLetter(c) && !unicode.IsNumber(c) && len(bad) < 5 {
			bad = append(bad, fmt.Sprintf("%q", c))
		}
	}
	if len(bad) > 0 {
		problems = append(problems, fmt.Sprintf("Skill name '%s' contains invalid characters (%s). Only letters, digits, and hyphens are allowed", name, strings.Join(bad, " ")))
	}
	return problems
}

func validateDescription(n ast.Node, long bool, r *Report) string {
	raw, ok := stringValue(n)
	if !ok && n != nil {
		r.fail(FieldDescription, "Field 'description' must be a non-empty string, not a %s", kind(n))
		return ""
	}
	d := strings.TrimSpace(raw)
	if d == "" {
		r.fail(FieldDescription, "Field 'description' must be a non-empty string")
		return ""
	}
	if c := utf8.RuneCountInString(d); c > MaxDescriptionLength {
		lengthProblem(r, long, FieldDescription, "Description exceeds %d character limit (%d chars)", MaxDescriptionLength, c)
	}
	return d
}

func validateCompatibility(n ast.Node, long bool, r *Report) string {
	if n == nil {
		return ""
	}
	v, ok := stringValue(n)
	if !ok {
		r.fail(FieldCompatibility, "Field 'compatibility' must be a string, not a %s", kind(n))
		return ""
	}
	v = strings.TrimSpace(v)
	if c := utf8.RuneCountInString(v); c > MaxCompatibilityLength {
		lengthProblem(r, long, FieldCompatibility, "Compatibility exceeds %d character limit (%d chars)", MaxCompatibilityLength, c)
	}
	return v
}

func validateAllowedTools(n ast.Node, r *Report) []string {
	if n == nil {
		return nil
	}
	if v, ok := stringValue(n); ok {
		return strings.Fields(v)
	}
	seq, ok := n.(*ast.SequenceNode)
	if !ok {
		r.fail(FieldAllowedTools, "Field 'allowed-tools' must be either a string or a list of strings, not a %s", kind(n))
		return nil
	}
	tools := make([]string, 0, len(seq.Values))
	for _, item := range seq.Values {
		v, ok := stringValue(item)
		if !ok {
			r.fail(FieldAllowedTools, "Field 'allowed-tools' list items must all be strings (line %d holds a %s)", fileLine(item), kind(item))
			return nil
		}
		tools = append(tools, strings.TrimSpace(v))
	}
	return tools
}

// validateMetadata reads metadata as a string-to-string map. Scalars keep the
// text they were written with, so "version: 1.0" stays "1.0" rather than
// becoming a float and back.
func validateMetadata(n ast.Node, lenient bool, r *Report) map[string]string {
	if n == nil {
		return nil
	}
	m, ok := n.(*ast.MappingNode)
	if !ok {
		r.fail(FieldMetadata, "Field 'metadata' must be a mapping of string keys to string values, not a %s", kind(n))
		return nil
	}
	out := make(map[string]string, len(m.Values))
	for _, mv := range m.Values {
		key, ok := scalarKey(mv.Key)
		if !ok {
			r.fail(FieldMetadata, "Field 'metadata' keys must be plain strings (line %d)", fileLine(mv.Key))
			continue
		}
		switch v := mv.Value.(type) {
		case *ast.MappingNode, *ast.SequenceNode:
			if !lenient {
				r.fail(FieldMetadata, "Field 'metadata' values must be strings, but key '%s' holds a %s", key, kind(v))
				continue
			}
			r.warn(FieldMetadata, "Field 'metadata' values must be strings, but key '%s' holds a %s; kept as its YAML text (lenient mode)", key, kind(v))
			out[key] = v.String()
		default:
			out[key] = literal(v)
		}
	}
	return out
}

// lengthProblem reports a field over its length limit: an error, or with
// long fields allowed a warning (the clients people use load such skills;
// a catalog shortens them to its budget anyway).
func lengthProblem(r *Report, long bool, field, format string, args ...any) {
	if long {
		r.warn(field, format+"; kept, as long fields are allowed here", args...)
		return
	}
	r.fail(field, format, args...)
}

// boolField reads a client's boolean field; a value that is not a boolean
// is a warning and the default holds.
func boolField(byKey fieldIndex, key string, def bool, r *Report) bool {
	f, ok := byKey.lookup(key)
	if !ok || f.value == nil {
		return def
	}
	if b, ok := f.value.(*ast.BoolNode); ok {
		return b.Value
	}
	r.warn(key, "Field '%s' must be true or false, not a %s; taken as %t", key, kind(f.value), def)
	return def
}

// fieldIndex finds a frontmatter entry by key; of a repeated key, the
// last. A frontmatter has a handful of entries, which a scan finds
// sooner than a map is built; a long one gets a map, so finding each of
// many keys stays linear in all.
type fieldIndex struct {
	fields []field
	byKey  map[string]int
}

// fieldScanMax is the most entries found by scanning.
const fieldScanMax = 16

func indexFields(fields []field) fieldIndex {
	x := fieldIndex{fields: fields}
	if len(fields) > fieldScanMax {
		x.byKey = make(map[string]int, len(fields))
		for i, f := range fields {
			x.byKey[f.key] = i
		}
	}
	return x
}

func (x fieldIndex) lookup(key string) (field, bool) {
	if x.byKey != nil {
		i, ok := x.byKey[key]
		if !ok {
			return field{}, false
		}
		return x.fields[i], true
	}
	for i := len(x.fields) - 1; i >= 0; i-- {
		if x.fields[i].key == key {
			return x.fields[i], true
		}
	}
	return field{}, false
}

func (x fieldIndex) get(key string) field {
	f, _ := x.lookup(key)
	return f
}
