package httpapi

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestBadEscape(t *testing.T) {
	for _, c := range []struct {
		body, field, what string // field "-": accepted
	}{
		{`{"name":"ok"}`, "-", ""},
		{`{"name":"pair \ud83d\ude00"}`, "-", ""},
		{`{"name":"escaped backslash \\ud800"}`, "-", ""},
		{`{"name":"\u00e9\n\"\\"}`, "-", ""},
		{`{"description":"x\ud800"}`, "description", "lone high surrogate"},
		{`{"description":"x\udc00y"}`, "description", "lone low surrogate"},
		{`{"description":"\ud800\u0041"}`, "description", "lone high surrogate"},
		{`{"description":"end\ud800"}`, "description", "lone high"},
		{`{"description":"nul\u0000"}`, "description", "NUL"},
		{`{"a":1,"files":{"SKILL.md":"x","b c.md":"\u0000"}}`, `files["b c.md"]`, "NUL"},
		{`{"files":{"x\ud800.md":"text"}}`, "files[\"x\ufffd.md\"]", "surrogate"},
		{`{"config":{"tools":{"allow":["a","b\udfff"]}},"name":"n"}`, "config.tools.allow[1]", "surrogate"},
		{`{"messages":[{"role":"user","content":"ok"},{"role":"user","content":"\u0000"}]}`, "messages[1].content", "NUL"},
		{`{"skills":[[1,2],{"k":[{"z":"\u0000"}]}]}`, "skills[1].k[0].z", "NUL"},
	} {
		err := checkEscapes([]byte(c.body))
		if c.field == "-" {
			if err != nil {
				t.Errorf("%s: %v", c.body, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.what) || !strings.Contains(err.Error(), `"`+strings.ReplaceAll(c.field, `"`, `\"`)+`"`) {
			t.Errorf("%s: %v; want field %s and %q", c.body, err, c.field, c.what)
		}
	}
}

// FuzzEscapes: on any valid JSON in valid UTF-8, a body badEscape passes decodes to
// strings without NUL and without a U+FFFD the body did not spell out, and
// one it objects to is refused. Seeds in testdata/fuzz/FuzzEscapes.
func FuzzEscapes(f *testing.F) {
	for _, s := range []string{`{"a":"\ud800"}`, `{"a":["\\ud800","\ud83d\ude00"]}`, `{"k\u0000":1}`, `{"a":{"b":[1,{"c":"\udfff"}]}}`, `"x"`, `{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		off, _ := badEscape(b)
		if !json.Valid(b) || !utf8.Valid(b) { // decodeJSON refuses both first
			return
		}
		if off >= 0 {
			if checkEscapes(b) == nil {
				t.Fatalf("%q: escape at %d not refused", b, off)
			}
			return
		}
		var v any
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber() // 1E1000 is valid JSON but no float64
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		spelled := bytes.Contains(b, []byte("\ufffd")) || bytes.Contains(bytes.ToLower(b), []byte(`\ufffd`))
		var walk func(any)
		check := func(s string) {
			if strings.ContainsRune(s, 0) || strings.ContainsRune(s, utf8.RuneError) && !spelled {
				t.Fatalf("%q passed but decodes to %q", b, s)
			}
		}
		walk = func(v any) {
			switch v := v.(type) {
			case string:
				check(v)
			case []any:
				for _, e := range v {
					walk(e)
				}
			case map[string]any:
				for k, e := range v {
					check(k)
					walk(e)
				}
			}
		}
		walk(v)
	})
}

// BenchmarkCheckEscapes scans a 5 MiB JSON body of skill files with
// ordinary escapes (newlines, quotes, accents) and none it refuses: the cost
// every JSON request pays.
func BenchmarkCheckEscapes(b *testing.B) {
	line := `# Heading\n\nSome \"quoted\" text with caf\u00e9 and a tab\t.\n`
	var body bytes.Buffer
	body.WriteString(`{"files":{`)
	for i := 0; body.Len() < 5<<20; i++ {
		if i > 0 {
			body.WriteByte(',')
		}
		body.WriteString(`"f` + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + `.md":"` + strings.Repeat(line, 400) + `"`)
	}
	body.WriteString(`}}`)
	b.Run("scan", func(b *testing.B) {
		b.SetBytes(int64(body.Len()))
		for b.Loop() {
			if err := checkEscapes(body.Bytes()); err != nil {
				b.Fatal(err)
			}
		}
	})
	// For scale: the decoding every such request does anyway.
	b.Run("json-decode", func(b *testing.B) {
		b.SetBytes(int64(body.Len()))
		for b.Loop() {
			var v struct{ Files map[string]string }
			if err := json.Unmarshal(body.Bytes(), &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
