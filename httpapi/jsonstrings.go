package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// encoding/json turns a lone UTF-16 surrogate escape ("\ud800") into U+FFFD
// without a word, and accepts "\u0000", which no database column should
// hold (PostgreSQL's text refuses it outright). A request holding either is
// refused with the field named, before the value is silently changed or
// fails deep in storage.

// badEscape returns the offset and a description of the first string
// escape in raw JSON that is NUL or a lone surrogate, or -1. Backslashes
// occur only inside strings in JSON, so a scan of the whole body is exact.
func badEscape(raw []byte) (int, string) {
	for i := 0; ; {
		j := bytes.IndexByte(raw[i:], '\\')
		if j < 0 || i+j+1 >= len(raw) {
			return -1, ""
		}
		i += j
		if raw[i+1] != 'u' {
			i += 2 // \" \\ \/ \n …
			continue
		}
		r, ok := hex4(raw, i+2)
		if !ok {
			return -1, "" // malformed; the decoder has said so already
		}
		switch {
		case r == 0:
			return i, `NUL (\u0000)`
		case r >= 0xdc00 && r <= 0xdfff:
			return i, fmt.Sprintf(`a lone low surrogate (\u%04x)`, r)
		case r >= 0xd800 && r <= 0xdbff:
			if lo, ok := hex4(raw, i+8); i+7 < len(raw) && raw[i+6] == '\\' && raw[i+7] == 'u' && ok && lo >= 0xdc00 && lo <= 0xdfff {
				i += 12
				continue
			}
			return i, fmt.Sprintf(`a lone high surrogate (\u%04x)`, r)
		}
		i += 6
	}
}

func hex4(raw []byte, at int) (rune, bool) {
	if at+4 > len(raw) {
		return 0, false
	}
	var r rune
	for _, c := range raw[at : at+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// checkEscapes refuses a body badEscape objects to, naming the field that
// holds the escape.
func checkEscapes(body []byte) error {
	off, what := badEscape(body)
	if off < 0 {
		return nil
	}
	field := fieldAt(body, off)
	if field == "" {
		return badRequest("", "request body holds %s at byte %d; strings must be valid Unicode text without NUL", what, off)
	}
	return badRequest(field, "field %q holds %s at byte %d; strings must be valid Unicode text without NUL", field, what, off)
}

// fieldAt returns the path ("files[\"a.md\"]", "messages[2].content") of the
// key or value whose token spans offset off of a valid JSON document.
func fieldAt(body []byte, off int) string {
	type frame struct {
		array bool
		key   string
		index int
		value bool // an object frame's next string is a value, not a key
	}
	var stack []frame
	path := func() string {
		var b strings.Builder
		for i, f := range stack {
			writeSegment(&b, i, f.array, f.key, f.index)
		}
		return b.String()
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		end := dec.InputOffset()
		top := len(stack) - 1
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:top]
			if top > 0 && !stack[top-1].array {
				stack[top-1].value = false
			}
			continue
		}
		if top >= 0 && !stack[top].array && !stack[top].value {
			stack[top].key, stack[top].value = tok.(string), true
			if end > int64(off) {
				return path()
			}
			continue
		}
		if top >= 0 && stack[top].array {
			stack[top].index++
		}
		if d, ok := tok.(json.Delim); ok {
			stack = append(stack, frame{array: d == '[', index: -1})
			continue
		}
		if end > int64(off) {
			return path()
		}
		if top >= 0 && !stack[top].array {
			stack[top].value = false
		}
	}
}

func isIdent(s string) bool {
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}
