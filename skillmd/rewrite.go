package skillmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// SetFields returns the SKILL.md data with the top-level frontmatter keys of
// set replaced by the given text values (added at the end of the
// frontmatter when absent). Everything else, other keys, comments, the
// body and the line endings, is kept byte for byte, so a renamed skill's
// SKILL.md differs from its author's only in the lines that name it. The
// frontmatter must parse: the data is expected to have passed Check.
func SetFields(data []byte, set map[string]string) ([]byte, error) {
	r := &Report{}
	bom := bytes.HasPrefix(data, utf8BOM)
	rest := data
	if bom {
		rest = data[len(utf8BOM):]
	}
	fm, _, ok := split(rest, r)
	if !ok {
		return nil, r.Err()
	}
	fields, ok := parseFrontmatter(bytes.ReplaceAll(fm, []byte("\r\n"), []byte("\n")), r)
	if !ok {
		return nil, r.Err()
	}
	start := len(data) - len(rest) + bytes.IndexByte(rest, '\n') + 1 // the frontmatter's first byte
	nl := "\n"
	if bytes.Contains(fm, []byte("\r\n")) {
		nl = "\r\n"
	}
	lines := strings.SplitAfter(string(fm), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	// Each field owns its key's line and every line up to the next key
	// (field lines count SKILL.md's lines: the frontmatter's first is 2).
	type span struct{ from, to int } // frontmatter line indexes, to exclusive
	spans := map[string]span{}
	for i, f := range fields {
		to := len(lines)
		if i+1 < len(fields) {
			to = fields[i+1].line - 2
		}
		spans[f.key] = span{f.line - 2, to}
	}
	var added []string
	replaced := map[int]string{} // first line of a span → its new text
	drop := map[int]bool{}
	for _, key := range slices.Sorted(maps.Keys(set)) {
		line := key + ": " + scalarText(set[key]) + nl
		sp, ok := spans[key]
		if !ok {
			added = append(added, line)
			continue
		}
		replaced[sp.from] = line
		for i := sp.from + 1; i < sp.to; i++ {
			// Comment lines between this value and the next key stay.
			if t := strings.TrimSpace(lines[i]); t != "" && !strings.HasPrefix(t, "#") || strings.HasPrefix(lines[i], " ") || strings.HasPrefix(lines[i], "\t") {
				drop[i] = true
			}
		}
	}
	var out bytes.Buffer
	out.Write(data[:start])
	for i, l := range lines {
		switch {
		case replaced[i] != "":
			out.WriteString(replaced[i])
		case drop[i]:
		default:
			if i == len(lines)-1 && !strings.HasSuffix(l, "\n") {
				l += nl
			}
			out.WriteString(l)
		}
	}
	for _, l := range added {
		out.WriteString(l)
	}
	out.Write(data[start+len(fm):])
	return out.Bytes(), nil
}

// scalarText writes v as a YAML scalar: plain when it reads back as the same
// text, double-quoted (JSON's escapes are YAML's) otherwise.
func scalarText(v string) string {
	if v != "" && v == strings.TrimSpace(v) && safeText(v) && !strings.ContainsAny(v, "\n\r") && readsBack(v) {
		return v
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("skillmd: encoding a string: %v", err)) // a string always encodes
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// readsBack reports whether v, written plain as a value, parses as the
// string v (not a number, a boolean, null, a comment or a nested mapping).
func readsBack(v string) bool {
	fields, ok := parseFrontmatter([]byte("k: "+v+"\n"), &Report{})
	if !ok || len(fields) != 1 {
		return false
	}
	got, ok := stringValue(fields[0].value)
	return ok && got == v
}
