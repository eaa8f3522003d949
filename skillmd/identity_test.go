package skillmd_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/skillmd"
)

func TestWithIdentity(t *testing.T) {
	for _, c := range []struct {
		name, in, want string
	}{
		{"renamed", "---\nname: skill-creator\ndescription: Makes skills.\n---\nBody\n",
			"---\nname: anthropic-skill-creator\ndescription: Makes skills.\n---\nBody\n"},
		{"comments, order and the rest kept", "---\n# who\nlicense: MIT\nname: \"skill-creator\"  # old\n\n# next\ndescription: Makes skills.\nmetadata:\n  version: \"1.0\"\n---\nBody\n",
			"---\n# who\nlicense: MIT\nname: anthropic-skill-creator\n\n# next\ndescription: Makes skills.\nmetadata:\n  version: \"1.0\"\n---\nBody\n"},
		{"a block value replaced whole", "---\nname: >-\n  skill-\n  creator\ndescription: |\n  Makes skills.\n---\n",
			"---\nname: anthropic-skill-creator\ndescription: |\n  Makes skills.\n---\n"},
		{"CRLF and a BOM", "\uFEFF---\r\nname: skill-creator\r\ndescription: Makes skills.\r\n---\r\nBody\r\n",
			"\uFEFF---\r\nname: anthropic-skill-creator\r\ndescription: Makes skills.\r\n---\r\nBody\r\n"},
		{"missing name added first", "---\ndescription: Makes skills.\n---\n",
			"---\nname: anthropic-skill-creator\ndescription: Makes skills.\n---\n"},
		{"an empty name", "---\nname:\ndescription: Makes skills.\n---\n",
			"---\nname: anthropic-skill-creator\ndescription: Makes skills.\n---\n"},
		{"a flow mapping written again", "---\n{name: skill-creator, description: Makes skills., license: MIT}\n---\nBody\n",
			"---\nname: anthropic-skill-creator\ndescription: Makes skills.\nlicense: MIT\n---\nBody\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := skillmd.WithIdentity([]byte(c.in), "anthropic-skill-creator", "Makes skills.")
			if err != nil || string(got) != c.want {
				t.Errorf("got %q, %v\nwant %q", got, err, c.want)
			}
		})
	}

	// Already agreeing (the description compared trimmed): the same bytes.
	in := []byte("---\nname: lint\ndescription: >\n  Lints.\n---\n")
	if got, err := skillmd.WithIdentity(in, "lint", "Lints."); err != nil || &got[0] != &in[0] {
		t.Errorf("an agreeing file was rewritten: %q %v", got, err)
	}

	// Values YAML would read as something else are quoted.
	for name, line := range map[string]string{"123": `name: "123"`, "true": `name: "true"`, "навык": "name: навык"} {
		got, err := skillmd.WithIdentity([]byte("---\nname: x\ndescription: d\n---\n"), name, "d")
		if err != nil || !bytes.Contains(got, []byte("\n"+line+"\n")) {
			t.Errorf("name %q: %q %v", name, got, err)
		}
	}
	got, err := skillmd.WithIdentity([]byte("---\nname: x\ndescription: d\n---\n"), "x", "Says: \"hi\" # not a comment\nand more")
	if err != nil || !bytes.Contains(got, []byte(`description: "Says: \"hi\" # not a comment\nand more"`)) {
		t.Errorf("a description needing quotes: %q %v", got, err)
	}

	for _, bad := range []string{"no frontmatter", "---\nname: x\n", "---\n- a list\n---\n", "---\nname: a\nname: b\n---\n"} {
		if _, err := skillmd.WithIdentity([]byte(bad), "x", "d"); skilld.ErrorCode(err) != skilld.EINVALID {
			t.Errorf("%q: %v, want invalid", bad, err)
		}
	}
}

// FuzzWithIdentity checks that for any SKILL.md whose frontmatter can be
// read, the result says the name and description asked for, keeps every
// other field and the body, and is the input itself when nothing had to
// change. Its seed corpus lives in testdata/fuzz/FuzzWithIdentity.
func FuzzWithIdentity(f *testing.F) {
	f.Add([]byte("---\nname: skill-creator\ndescription: Makes skills.\nlicense: MIT\n---\nBody\n"), "anthropic-skill-creator", "Makes skills.")
	f.Add([]byte("---\r\n{name: a, description: b, metadata: {v: 1.0}}\r\n---\r\n"), "b", "c: d")
	f.Add([]byte("---\nname: |\n  x\n# c\ndescription: d\nallowed-tools: [Read]\n---\n"), "навык", "123")
	f.Fuzz(func(t *testing.T, data []byte, name, description string) {
		// Stored names and descriptions are normalized and trimmed, which
		// is also the form Check reports them in.
		if !utf8.ValidString(name) || !utf8.ValidString(description) || name == "" || name != skillmd.NormalizeName(name) ||
			description == "" || description != strings.TrimSpace(description) {
			return
		}
		before := skillmd.Check(data, skillmd.Options{Lenient: true})
		out, err := skillmd.WithIdentity(data, name, description)
		if before.Skill == nil {
			if err == nil {
				t.Fatalf("a file whose frontmatter cannot be read was accepted: %q", out)
			}
			return
		}
		if err != nil {
			t.Fatalf("%q: %v", data, err)
		}
		after := skillmd.Check(out, skillmd.Options{Lenient: true})
		if after.Skill == nil {
			t.Fatalf("the result cannot be read: %q → %q: %v", data, out, after.Errors)
		}
		b, a := before.Skill, after.Skill
		if a.Name != name || a.Description != description {
			t.Fatalf("%q → %q says name %q, description %q", data, out, a.Name, a.Description)
		}
		if b.License != a.License || b.Compatibility != a.Compatibility || !reflect.DeepEqual(b.Metadata, a.Metadata) ||
			!reflect.DeepEqual(b.AllowedTools, a.AllowedTools) || !reflect.DeepEqual(b.Extra, a.Extra) || b.Body != a.Body {
			t.Fatalf("%q → %q changed other fields: %+v → %+v", data, out, b, a)
		}
		if b.Name == name && b.Description == description && !bytes.Equal(out, data) {
			// Check normalizes the name: only an exact one is left alone.
			if again, _ := skillmd.WithIdentity(out, name, description); !bytes.Equal(again, out) {
				t.Fatalf("a second pass changed %q again to %q", out, again)
			}
		}
	})
}
