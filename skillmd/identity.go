package skillmd

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/skilld/skilld"
)

// WithIdentity returns a SKILL.md whose frontmatter says name and
// description: a skill stored under a name (or description) other than its
// file's must not be published with the file contradicting it, since
// readers take the frontmatter's name as the skill's. It returns data
// itself when the frontmatter already agrees (the description compared
// trimmed, as it is stored).
//
// Only the entries that disagree change: each is replaced by one
// "key: value" line, or added after the opening "---" when missing, so
// comments, order, formatting and the body stay as written. A frontmatter
// laid out so that line edits cannot be made (a flow mapping, say) is
// written out again instead, keeping every other entry's value. Either way
// the result is decoded again and must carry exactly the new values and
// every other entry unchanged. An error (EINVALID) means the frontmatter
// could not be read, or (for a value that is not valid UTF-8) not written.
func WithIdentity(data []byte, name, description string) ([]byte, error) {
	r := &Report{}
	fmText, _, ok := split(string(data), r)
	if !ok {
		return nil, r.Err()
	}
	fields, ok := decodeFrontmatter(fmText, r)
	if !ok {
		return nil, r.Err()
	}
	want := disagreeing(fields, name, description)
	if len(want) == 0 {
		return data, nil
	}
	fm := []byte(fmText)
	// fm is data[start:start+len(fm)]: split skips a byte order mark and the
	// opening line.
	start := 0
	if bytes.HasPrefix(data, []byte(utf8BOM)) {
		start = len(utf8BOM)
	}
	first, _, _ := bytes.Cut(data[start:], []byte("\n"))
	start += len(first) + 1
	end := start + len(fm)
	rebuilt := func(newFM []byte) []byte {
		out := make([]byte, 0, len(data)-len(fm)+len(newFM))
		out = append(out, data[:start]...)
		out = append(out, newFM...)
		return append(out, data[end:]...)
	}
	if newFM, ok := editLines(fm, fields, want); ok && carries(newFM, fields, want) {
		return rebuilt(newFM), nil
	}
	newFM, err := rewrite(fields, want, lineEnding(first))
	if err != nil {
		return nil, err
	}
	if !carries(newFM, fields, want) {
		return nil, skilld.Errorf(skilld.EINVALID, "SKILL.md frontmatter cannot be given the name %q and its description", name)
	}
	return rebuilt(newFM), nil
}

// disagreeing returns the entries to set: name and description, each
// unless the frontmatter already holds it.
func disagreeing(fields []field, name, description string) map[string]string {
	want := map[string]string{FieldName: name, FieldDescription: description}
	for _, f := range fields {
		v, ok := stringValue(f.value)
		switch {
		case f.key == FieldName && ok && v == name,
			f.key == FieldDescription && ok && strings.TrimSpace(v) == description:
			delete(want, f.key)
		}
	}
	return want
}

// editLines replaces the lines of the wanted entries in fm, and puts the
// missing ones first. It reports false when the entries are not each on
// lines of their own.
func editLines(fm []byte, fields []field, want map[string]string) ([]byte, bool) {
	lines := bytes.SplitAfter(fm, []byte("\n"))
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	// A field's line is its line in the file, where the frontmatter starts
	// on line 2.
	at := make([]int, len(fields))
	for i, f := range fields {
		at[i] = f.line - 2
		if at[i] < 0 || at[i] >= len(lines) || i > 0 && at[i] <= at[i-1] {
			return nil, false
		}
		if c := lines[at[i]][0]; c == ' ' || c == '\t' || c == '{' {
			return nil, false
		}
	}
	eol := "\n"
	if len(lines) > 0 {
		eol = lineEnding(lines[0])
	}
	var out []byte
	for _, key := range []string{FieldName, FieldDescription} {
		if v, ok := want[key]; ok && !hasField(fields, key) {
			out = append(out, entry(key, v, eol)...)
		}
	}
	out = append(out, bytes.Join(lines[:at[0]], nil)...)
	for i, f := range fields {
		stop := len(lines)
		if i+1 < len(fields) {
			stop = at[i+1]
		}
		v, wanted := want[f.key]
		if !wanted {
			out = append(out, bytes.Join(lines[at[i]:stop], nil)...)
			continue
		}
		// The entry's value runs to the next entry, less the blank lines
		// and top-level comments before it, which are kept.
		last := stop
		for last > at[i]+1 && isSpacer(lines[last-1]) {
			last--
		}
		out = append(out, entry(f.key, v, lineEnding(lines[at[i]]))...)
		out = append(out, bytes.Join(lines[last:stop], nil)...)
	}
	return out, true
}

func hasField(fields []field, key string) bool {
	for _, f := range fields {
		if f.key == key {
			return true
		}
	}
	return false
}

// isSpacer reports a blank line or a comment at the start of a line, which
// belongs to no entry's value.
func isSpacer(line []byte) bool {
	t := bytes.TrimRight(line, " \t\r\n")
	return len(t) == 0 || t[0] == '#'
}

func lineEnding(line []byte) string {
	if bytes.HasSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r")) {
		return "\r\n"
	}
	return "\n"
}

// entry renders "key: value": plain when YAML reads the plain text back as
// that very string, else double-quoted (a JSON string is a valid YAML
// double-quoted scalar).
func entry(key, value, eol string) []byte {
	return []byte(key + ": " + scalar(value) + eol)
}

func scalar(v string) string {
	if v != "" && !strings.ContainsAny(v, "\r\n") {
		if fs, ok := fastFrontmatter("k: " + v + "\n"); ok && len(fs) == 1 {
			// The fast path gives a string node only for what YAML reads
			// as a string, never for a number or a boolean.
			if s, ok := stringValue(fs[0].value); ok && s == v {
				return v
			}
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// rewrite renders the whole frontmatter again: name and description
// first, then every other entry's value as decoded, in order. Comments and
// layout are lost; it is the fallback for frontmatter whose lines cannot be
// edited.
func rewrite(fields []field, want map[string]string, eol string) ([]byte, error) {
	var ms yaml.MapSlice
	for _, key := range []string{FieldName, FieldDescription} {
		if v, ok := want[key]; ok {
			ms = append(ms, yaml.MapItem{Key: key, Value: v})
			continue
		}
		for _, f := range fields {
			if f.key == key {
				ms = append(ms, yaml.MapItem{Key: key, Value: toValue(f.value)})
			}
		}
	}
	for _, f := range fields {
		if f.key != FieldName && f.key != FieldDescription {
			ms = append(ms, yaml.MapItem{Key: f.key, Value: toValue(f.value)})
		}
	}
	out, err := yaml.MarshalWithOptions(ms, yaml.UseLiteralStyleIfMultiline(true))
	if err != nil {
		return nil, skilld.Errorf(skilld.EINVALID, "SKILL.md frontmatter cannot be written again: %v", err)
	}
	if eol != "\n" {
		out = bytes.ReplaceAll(out, []byte("\n"), []byte(eol))
	}
	return out, nil
}

// carries decodes fm and reports whether it holds exactly the wanted values
// and every other entry of the original, in value, unchanged.
func carries(fm []byte, orig []field, want map[string]string) bool {
	fields, ok := decodeFrontmatter(string(fm), &Report{})
	if !ok {
		return false
	}
	got, was := values(fields), values(orig)
	for key, v := range want {
		if s, ok := got[key].(string); !ok || s != v {
			return false
		}
		delete(got, key)
		delete(was, key)
	}
	return reflect.DeepEqual(got, was)
}

func values(fields []field) map[string]any {
	m := make(map[string]any, len(fields))
	for _, f := range fields {
		m[f.key] = toValue(f.value)
	}
	return m
}
