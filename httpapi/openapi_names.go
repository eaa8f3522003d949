package httpapi

import (
	"reflect"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Component names. OpenAPI 3.1 allows only ^[a-zA-Z0-9.\-_]+$ as the key of
// a component, and Go's type strings are full of other characters
// ("[]*skilld.TaskLogEntry", "map[string]int",
// "Page[github.com/skilld/skilld.Skill]"), so every name is made here, from
// the type's shape, and nowhere else.

// schemaName returns the component name of t: a named type by its name, an
// instance of a generic type by its name and type arguments
// ("PageOfSkill", "PairOfStringAndInt"), a slice or array by its element
// and "List", a map by its value and "Map", a pointer as what it points to.
// The result always matches validComponentName; two types may share a
// name, which the caller resolves (see uniqueName).
func schemaName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Name() != "" {
		return sanitizeName(nameOfTypeString(t.Name()))
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return schemaName(t.Elem()) + "List"
	case reflect.Map:
		return schemaName(t.Elem()) + "Map"
	case reflect.Struct:
		return "Object"
	case reflect.Interface:
		return "Value"
	}
	return sanitizeName(exported(t.Kind().String()))
}

// nameOfTypeString turns a Go type as reflect spells it (a type argument
// of a generic instance is spelled with its full package path) into a
// component name, by the rules of schemaName.
func nameOfTypeString(s string) string {
	s = strings.TrimSpace(s)
	switch {
	case strings.HasPrefix(s, "*"):
		return nameOfTypeString(s[1:])
	case strings.HasPrefix(s, "[]"):
		return nameOfTypeString(s[2:]) + "List"
	case strings.HasPrefix(s, "["): // an array, [N]T
		if _, elem, ok := strings.Cut(s, "]"); ok {
			return nameOfTypeString(elem) + "List"
		}
	case strings.HasPrefix(s, "map["):
		if end := closing(s, len("map")); end > 0 {
			return nameOfTypeString(s[end+1:]) + "Map"
		}
	}
	base, args, generic := strings.Cut(s, "[")
	// "github.com/skilld/skilld/service.Skill" → "Skill"; package paths
	// may hold dots ("gopkg.in/yaml.v3"), package names after the last
	// slash hold none but the one before the type's name.
	base = base[strings.LastIndex(base, "/")+1:]
	base = base[strings.LastIndex(base, ".")+1:]
	name := exported(base)
	if generic {
		parts := splitTopLevel(strings.TrimSuffix(args, "]"))
		for i, p := range parts {
			parts[i] = nameOfTypeString(p)
		}
		name += "Of" + strings.Join(parts, "And")
	}
	return name
}

// closing returns the index of the bracket that closes the one at open, or
// -1.
func closing(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// splitTopLevel splits a list of type arguments at the commas outside
// brackets: "a.T,map[string]b.U" is two arguments.
func splitTopLevel(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// exported capitalizes the first letter: "string" → "String".
func exported(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

// sanitizeName drops every character a component name may not hold (what
// is left of a struct or func literal in a type argument), and never
// answers "".
func sanitizeName(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < utf8.RuneSelf && (r == '.' || r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return r
		}
		return -1
	}, s)
	if s == "" {
		return "Value"
	}
	return s
}

// validComponentName reports whether s may be the key of an OpenAPI 3.1
// component.
func validComponentName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r >= utf8.RuneSelf || !(r == '.' || r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return false
		}
	}
	return true
}

// uniqueName returns name if no other type has it (taken says), else the
// name qualified by t's package ("AgentEvent"), else that numbered
// ("AgentEvent2"): the first
// type to claim a name keeps it, so names only depend on the order types
// are met in, which the route table fixes.
func uniqueName(name string, t reflect.Type, taken func(string) bool) string {
	if !taken(name) {
		return name
	}
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if pkg := t.PkgPath(); pkg != "" {
		q := sanitizeName(exported(pkg[strings.LastIndex(pkg, "/")+1:])) + name
		if !taken(q) {
			return q
		}
		name = q
	}
	for i := 2; ; i++ {
		if n := name + strconv.Itoa(i); !taken(n) {
			return n
		}
	}
}
