package httpapi

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestDuplicateKey(t *testing.T) {
	for _, c := range []struct{ body, path string }{ // path "": accepted
		{`{"name":"a"}`, ""},
		{`{}`, ""},
		{`[]`, ""},
		{`"x"`, ""},
		{`{"a":{"k":1},"b":{"k":1}}`, ""},   // equal keys in sibling objects
		{`{"a":[{"k":1},{"k":2}]}`, ""},     // equal keys in array elements
		{`{"k":{"k":{"k":1}}}`, ""},         // equal keys at different levels
		{`{"Name":"a","name":"b"}`, ""},     // keys differ by case
		{`{"a":"name","name":"a"}`, ""},     // a value equal to a key
		{`{"name":"a","name":"b"}`, "name"}, // the plain case
		{`{"a":1,"\u0061":2}`, "a"},         // the same key spelled two ways
		{`{"config":{"context":{"window":1,"window":2}}}`, "config.context.window"},
		{`{"files":[{"path":"a"},{"path":"b"},{"path":"c","path":"d"}]}`, "files[2].path"},
		{`{"files":{"SKILL.md":"a","SKILL.md":"b"}}`, `files["SKILL.md"]`},
		{`{"m":[[1,2],[3,{"x":[],"y":{},"x":0}]]}`, "m[1][1].x"},
		{`{"a":{"b":1},"c":[{"d":{"e":1}}],"a":2}`, "a"}, // after closed containers
		{`{"a":[{"b":1,"c":{"d":1,"d":2}}]}`, "a[0].c.d"},
		{`{"a":1,"a"`, "a"}, // found before the end; decodeJSON has refused the body already
		{`{"a":1,}`, ""},
	} {
		if got := duplicateKey([]byte(c.body)); got != c.path {
			t.Errorf("%s: %q, want %q", c.body, got, c.path)
		}
	}
	err := checkDuplicateKeys([]byte(`{"config":{"context":{"window":1,"window":2}}}`))
	if err == nil || !strings.Contains(err.Error(), `"config.context.window"`) {
		t.Errorf("checkDuplicateKeys: %v", err)
	}
}

// FuzzDuplicateKeys: duplicateKey never panics, and on valid JSON it finds
// a duplicate exactly when decoding into maps loses a key: the number of
// keys read token by token exceeds the number of keys kept. Seeds in
// testdata/fuzz/FuzzDuplicateKeys.
func FuzzDuplicateKeys(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `{"a":[{"b":1},{"b":1,"b":2}]}`, `{"x":{"y":{"z":1}},"y":{"z":1,"x":{}}}`, `[{"k":1},{"k":1}]`, `{"a":1,"\u0061":2}`, `{}`, `1`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		path := duplicateKey(b)
		if !json.Valid(b) {
			return // refused before the check; it only must not panic
		}
		var v any
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			return // deeper than encoding/json allows: refused before the check
		}
		kept := 0
		var walk func(any)
		walk = func(v any) {
			switch v := v.(type) {
			case []any:
				for _, e := range v {
					walk(e)
				}
			case map[string]any:
				kept += len(v)
				for _, e := range v {
					walk(e)
				}
			}
		}
		walk(v)
		if n := countKeys(b); (path != "") != (n > kept) {
			t.Fatalf("%q: duplicate %q, but %d keys read and %d kept", b, path, n, kept)
		}
	})
}

// countKeys counts the object keys of a valid JSON document, duplicates
// included: in an object, tokens alternate key and value, and a value
// that is an object or an array is read in its own frame.
func countKeys(b []byte) int {
	type frame struct{ object, keyNext bool }
	n := 0
	var stack []frame
	dec := json.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := dec.Token()
		if err != nil {
			return n
		}
		top := len(stack) - 1
		d, delim := tok.(json.Delim)
		switch {
		case delim && (d == '}' || d == ']'):
			stack = stack[:top]
			continue
		case top >= 0 && stack[top].keyNext:
			n++
			stack[top].keyNext = false
			continue
		case top >= 0 && stack[top].object:
			stack[top].keyNext = true // this is the value: a key comes next
		}
		if delim {
			stack = append(stack, frame{object: d == '{', keyNext: d == '{'})
		}
	}
}
