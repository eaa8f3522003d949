package callview

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/skilld/skilld/agent"
)

func TestParseArgs(t *testing.T) {
	for _, c := range []struct {
		name, tool, raw string
		want            Args
		text            string
	}{
		{"shell command as typed", "shell", `{"command":"cd skills/x \u0026\u0026 python3 run.py \u003e out.txt"}`,
			Args{Command: "cd skills/x && python3 run.py > out.txt", Pairs: []Pair{}}, "cd skills/x && python3 run.py > out.txt"},
		{"shell with a timeout", "shell", `{"timeout_s": 5, "command": "sleep 1\necho done"}`,
			Args{Command: "sleep 1\necho done", Pairs: []Pair{{Key: "timeout_s", Value: "5"}}}, "sleep 1\necho done  [timeout_s=5]"},
		{"shell without a command string", "shell", `{"command": 3}`,
			Args{Pairs: []Pair{{Key: "command", Value: "3"}}}, "command=3"},
		{"pairs in the model's order", "read_file", `{"path":"notes/a b.txt","offset":3,"limit":2}`,
			Args{Pairs: []Pair{{Key: "path", Value: "notes/a b.txt", Quoted: true}, {Key: "offset", Value: "3"}, {Key: "limit", Value: "2"}}},
			`path="notes/a b.txt" offset=3 limit=2`},
		{"a value with a newline", "write_file", `{"path":"a.csv","content":"x,y\n1,2\n"}`,
			Args{Pairs: []Pair{{Key: "path", Value: "a.csv"}, {Key: "content", Value: "x,y\n1,2\n", Quoted: true}}},
			`path=a.csv content="x,y\n1,2\n"`},
		{"nested values keep their order and their ampersands", "emit", `{"rows":[{"z":1,"a":"x \u0026 y"}],"ok":true,"none":null}`,
			Args{Pairs: []Pair{{Key: "rows", Value: `[{"z":1,"a":"x & y"}]`}, {Key: "ok", Value: "true"}, {Key: "none", Value: "null"}}},
			`rows=[{"z":1,"a":"x & y"}] ok=true none=null`},
		{"an escaped backslash before u0026 stays", "emit", `{"v":["a\\u0026b"]}`,
			Args{Pairs: []Pair{{Key: "v", Value: `["a\\u0026b"]`}}}, `v=["a\\u0026b"]`},
		{"empty string", "emit", `{"v":""}`, Args{Pairs: []Pair{{Key: "v", Value: "", Quoted: true}}}, `v=""`},
		{"an array", "emit", ` [1, "\u003cb\u003e"] `, Args{JSON: `[1,"<b>"]`}, `[1,"<b>"]`},
		{"not JSON", "emit", `{"command": "ls"`, Args{JSON: `{"command": "ls"`}, `{"command": "ls"`},
		{"trailing data", "shell", `{"command":"ls"} {}`, Args{JSON: `{"command":"ls"} {}`}, `{"command":"ls"} {}`},
		{"no arguments", "list_files", ``, Args{}, ``},
		{"an empty object", "list_files", `{}`, Args{Pairs: []Pair{}}, ``},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := ParseArgs(c.tool, json.RawMessage(c.raw))
			if got.Pairs == nil && c.want.Pairs != nil && len(c.want.Pairs) == 0 {
				got.Pairs = []Pair{}
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("ParseArgs(%s) = %#v, want %#v", c.raw, got, c.want)
			}
			if s := got.String(); s != c.text {
				t.Errorf("String() = %q, want %q", s, c.text)
			}
		})
	}
}

// FuzzParseArgs: any arguments read without a panic; an object's fields
// all come back, a string as its value, and any other JSON value means
// what it meant.
func FuzzParseArgs(f *testing.F) {
	for _, s := range []string{`{"command":"a \u0026\u0026 b"}`, `{"path":"x","offset":1}`, `[1,2]`, `{"a":{"b":"\u003c"}}`, `{`, `"x"`} {
		f.Add("shell", s)
	}
	f.Fuzz(func(t *testing.T, tool, raw string) {
		a := ParseArgs(tool, json.RawMessage(raw))
		_ = a.String()
		var obj map[string]json.RawMessage
		trimmed := bytes.TrimSpace([]byte(raw))
		if a.JSON != "" {
			if json.Valid(trimmed) {
				if !sameJSON(t, []byte(a.JSON), trimmed) {
					t.Errorf("JSON %s does not mean what %s means", a.JSON, raw)
				}
			} else if a.JSON != string(trimmed) {
				t.Errorf("not JSON, shown as %q, want %q", a.JSON, trimmed)
			}
			return
		}
		if len(trimmed) == 0 {
			return
		}
		if err := json.Unmarshal(trimmed, &obj); err != nil {
			t.Fatalf("%q is no object but was read as one: %#v", raw, a)
		}
		n := len(a.Pairs)
		if a.Command != "" || (tool == agent.ToolShell && hasStringCommand(obj)) {
			n++
		}
		if n < len(obj) {
			t.Errorf("%d fields of %d came back: %#v", n, len(obj), a)
		}
		seen := map[string]int{}
		for _, p := range a.Pairs {
			seen[p.Key]++
		}
		for _, p := range a.Pairs {
			v, ok := obj[p.Key]
			if seen[p.Key] > 1 {
				// A repeated key: the map holds one of its values.
				continue
			}
			if !ok {
				t.Errorf("field %q is not in %s", p.Key, raw)
				continue
			}
			var s string
			if v[0] == '"' {
				if json.Unmarshal(v, &s) != nil || s != p.Value {
					t.Errorf("field %q: %q, want %s", p.Key, p.Value, v)
				}
			} else if !sameJSON(t, []byte(p.Value), v) {
				t.Errorf("field %q: %s does not mean %s", p.Key, p.Value, v)
			}
		}
	})
}

func hasStringCommand(obj map[string]json.RawMessage) bool {
	v := obj["command"]
	return len(v) > 0 && v[0] == '"'
}

// sameJSON reports whether a and b are the same JSON value, numbers
// compared as written (a view never rounds one).
func sameJSON(t *testing.T, a, b []byte) bool {
	decode := func(b []byte) (any, error) {
		var v any
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		err := dec.Decode(&v)
		return v, err
	}
	x, err := decode(a)
	if err != nil {
		t.Errorf("%s is not JSON: %v", a, err)
		return false
	}
	y, err := decode(b)
	return err == nil && reflect.DeepEqual(x, y)
}
