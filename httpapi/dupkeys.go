package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// encoding/json keeps the last of two equal keys without a word, so
// {"name":"a","name":"b"} would be read as "b" here and perhaps as "a" by
// a proxy, a log or an audit that read the same body. A body that names a
// key twice in one object is refused instead, with the key's path.

// duplicateKey returns the path ("name", "config.context.window",
// "files[2].path") of the first key a JSON document repeats inside one
// object, or "" when it repeats none (on a body that is not valid JSON it
// stops at the first syntax error; decodeJSON refuses such a body first). It streams
// tokens, holding the keys of the objects open at the current point only,
// so its memory is bounded by the body and its depth by the decoder's.
func duplicateKey(body []byte) string {
	type frame struct {
		array bool
		index int                 // of the current element of an array
		key   string              // the current key of an object
		seen  map[string]struct{} // an object's keys so far
		value bool                // an object's next token is a value, not a key
	}
	var stack []frame
	dec := json.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		top := len(stack) - 1
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			if top < 0 {
				return ""
			}
			stack = stack[:top]
			if top > 0 && !stack[top-1].array {
				stack[top-1].value = false
			}
			continue
		}
		if top >= 0 && !stack[top].array && !stack[top].value {
			key, _ := tok.(string)
			stack[top].key, stack[top].value = key, true
			if _, dup := stack[top].seen[key]; dup {
				var b strings.Builder
				for i, f := range stack {
					writeSegment(&b, i, f.array, f.key, f.index)
				}
				return b.String()
			}
			stack[top].seen[key] = struct{}{}
			continue
		}
		if top >= 0 && stack[top].array {
			stack[top].index++
		}
		if d, ok := tok.(json.Delim); ok {
			f := frame{array: d == '[', index: -1}
			if !f.array {
				f.seen = map[string]struct{}{}
			}
			stack = append(stack, f)
			continue
		}
		if top >= 0 && !stack[top].array {
			stack[top].value = false
		}
	}
}

// writeSegment appends the i-th segment of a field path: an array index
// as [2], a key as .key, or ["key"] when it is no identifier.
func writeSegment(b *strings.Builder, i int, array bool, key string, index int) {
	switch {
	case array:
		fmt.Fprintf(b, "[%d]", index)
	case i > 0 && !isIdent(key):
		fmt.Fprintf(b, "[%q]", key)
	case i > 0:
		b.WriteString("." + key)
	default:
		b.WriteString(key)
	}
}

// checkDuplicateKeys refuses a body that repeats a key in one object.
func checkDuplicateKeys(body []byte) error {
	if path := duplicateKey(body); path != "" {
		return badRequest(path, "field %q is given more than once; give each key once per object", path)
	}
	return nil
}
