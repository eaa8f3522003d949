package skillmd

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSetFields(t *testing.T) {
	for _, c := range []struct {
		name, in string
		set      map[string]string
		want     string
	}{
		{"plain", "---\nname: skill-creator\ndescription: Makes skills. Use when asked.\nlicense: MIT\n---\n# Body\n",
			map[string]string{"name": "anthropic-skill-creator"},
			"---\nname: anthropic-skill-creator\ndescription: Makes skills. Use when asked.\nlicense: MIT\n---\n# Body\n"},
		{"block description and comments kept", "---\n# the name\nname: a\ndescription: >\n  folded\n  text\n\n# after\nmetadata:\n  k: v\n---\nbody",
			map[string]string{"description": "New: text #1"},
			"---\n# the name\nname: a\ndescription: \"New: text #1\"\n\n# after\nmetadata:\n  k: v\n---\nbody"},
		{"added when missing, CRLF kept", "\ufeff---\r\nname: a\r\n---\r\nbody\r\n",
			map[string]string{"description": "Fresh."},
			"\ufeff---\r\nname: a\r\ndescription: Fresh.\r\n---\r\nbody\r\n"},
		{"last line without newline", "---\nname: a\ndescription: d\n---\n",
			map[string]string{"name": "b", "description": "true"},
			"---\nname: b\ndescription: \"true\"\n---\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := SetFields([]byte(c.in), c.set)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Errorf("got\n%q\nwant\n%q", got, c.want)
			}
		})
	}
	if _, err := SetFields([]byte("no frontmatter"), map[string]string{"name": "x"}); err == nil {
		t.Error("a file without frontmatter was rewritten")
	}
}

// FuzzSetFields: whatever the values, the rewritten file parses and reads
// them back exactly, and its body is untouched.
func FuzzSetFields(f *testing.F) {
	f.Add("---\nname: a\ndescription: d\n---\nbody\n", "b", "a: b # c")
	f.Add("---\r\nname: a\r\ndescription: |\r\n  x\r\n---\r\n", "x-y", "\"quoted\" 'and' \\ back")
	f.Add("---\nname: a\nmetadata:\n  k: v\n---\n", "-lead", "- list?")
	f.Fuzz(func(t *testing.T, in, name, desc string) {
		r := Check([]byte(in), Options{Lenient: true})
		if r.Skill == nil || !utf8.ValidString(name) || !utf8.ValidString(desc) {
			return
		}
		out, err := SetFields([]byte(in), map[string]string{"name": name, "description": desc})
		if err != nil {
			t.Fatalf("a file Check parsed was refused: %v", err)
		}
		got := Check(out, Options{Lenient: true})
		if got.Skill == nil {
			t.Fatalf("the rewritten file does not parse: %q → %q: %v", in, out, got.Errors)
		}
		if strings.TrimSpace(name) != "" && got.Skill.Name != NormalizeName(name) {
			t.Errorf("name %q read back as %q from %q", name, got.Skill.Name, out)
		}
		if strings.TrimSpace(desc) != "" && got.Skill.Description != strings.TrimSpace(desc) {
			t.Errorf("description %q read back as %q from %q", desc, got.Skill.Description, out)
		}
		if !bytes.HasSuffix(out, []byte(r.Skill.Body)) && r.Skill.Body != got.Skill.Body {
			t.Errorf("the body changed: %q → %q", r.Skill.Body, got.Skill.Body)
		}
	})
}
