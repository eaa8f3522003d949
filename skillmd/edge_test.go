package skillmd_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/skillmd"
)

func TestEdgeCases(t *testing.T) {
	t.Parallel()
	const ok = "name: my-skill\ndescription: A test skill\n"
	bomb := "---\nname: my-skill\ndescription: A test skill\nmetadata:\n  a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n  b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n  c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n  d: [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n---\n"
	tests := []struct {
		name     string
		content  string
		opts     skillmd.Options
		want     []string // error substrings; nil means valid
		warnings []string
		check    func(t *testing.T, s *skillmd.Skill)
	}{
		{name: "CRLF line endings", content: "---\r\nname: my-skill\r\ndescription: A test skill\r\n---\r\n# Title\r\nText\r\n",
			check: func(t *testing.T, s *skillmd.Skill) {
				if s.Description != "A test skill" || !strings.HasPrefix(s.Body, "# Title") {
					t.Errorf("CRLF parse: %+v", s)
				}
			}},
		{name: "delimiter with trailing spaces", content: "---  \n" + ok + "---\t\nBody"},
		{name: "--- inside the body", content: "---\n" + ok + "---\nIntro\n---\nMore\n---\n",
			check: func(t *testing.T, s *skillmd.Skill) {
				if s.Body != "Intro\n---\nMore\n---" {
					t.Errorf("body = %q", s.Body)
				}
			}},
		{name: "--- inside a frontmatter value does not close it", content: "---\nname: my-skill\ndescription: \"a --- b\"\n---\n",
			check: func(t *testing.T, s *skillmd.Skill) {
				if s.Description != "a --- b" {
					t.Errorf("description = %q", s.Description)
				}
			}},
		{name: "empty body", content: "---\n" + ok + "---",
			check: func(t *testing.T, s *skillmd.Skill) {
				if s.Body != "" {
					t.Errorf("body = %q", s.Body)
				}
			}},
		{name: "empty frontmatter", content: "---\n---\nBody", want: []string{"must be a YAML mapping"}},
		{name: "scalar frontmatter", content: "---\njust text\n---\n", want: []string{"must be a YAML mapping"}},
		{name: "four dashes is not a delimiter", content: "----\n" + ok + "---\n", want: []string{"must start with YAML frontmatter"}},
		{name: "leading blank line", content: "\n---\n" + ok + "---\n", want: []string{"must start with YAML frontmatter"}},
		{name: "empty file", content: "", want: []string{"must start with YAML frontmatter"}},
		{name: "BOM is a warning", content: "\uFEFF---\n" + ok + "---\n", warnings: []string{"byte order mark"}},
		{name: "invalid UTF-8", content: "---\nname: my-skill\ndescription: caf\xe9\n---\n", want: []string{"not valid UTF-8 (first invalid byte at offset 35)"}},
		{name: "huge frontmatter", content: "---\n" + ok + "license: " + strings.Repeat("x", skillmd.MaxFrontmatterSize) + "\n---\n", want: []string{"frontmatter exceeds 65536 bytes"}},
		{name: "huge unclosed frontmatter", content: "---\n" + strings.Repeat("x: y\n", skillmd.MaxFrontmatterSize), want: []string{"frontmatter exceeds"}},
		{name: "alias bomb", content: bomb, want: []string{"anchors, aliases and merge keys are not allowed (line 5)"}},
		{name: "merge key", content: "---\n" + ok + "metadata:\n  <<: {a: b}\n---\n", want: []string{"not allowed"}},
		{name: "duplicate key", content: "---\n" + ok + "name: other\n---\n", want: []string{"Invalid YAML in frontmatter: line 4 column 1: mapping key \"name\" already defined"}},
		{name: "two YAML documents", content: "---\n" + ok + "...\nfoo: bar\n---\n", want: []string{"Invalid YAML"}},
		{name: "complex key", content: "---\n" + ok + "? [a, b]\n: c\n---\n", want: []string{"Invalid YAML"}},
		{name: "integer name", content: "---\nname: 123\ndescription: d\n---\n", want: []string{"Field 'name' must be a non-empty string, not a integer"}},
		{name: "tagged string name", content: "---\nname: !!str 123\ndescription: d\n---\n", opts: skillmd.Options{Dir: "123"}},
		{name: "boolean description", content: "---\nname: my-skill\ndescription: true\n---\n", want: []string{"Field 'description' must be a non-empty string, not a boolean"}},
		{name: "list description", content: "---\nname: my-skill\ndescription: [a]\n---\n", want: []string{"not a list"}},
		{name: "null name", content: "---\nname:\ndescription: d\n---\n", want: []string{"Field 'name' must be a non-empty string"}},
		{name: "blank name", content: "---\nname: \"  \"\ndescription: d\n---\n", want: []string{"Field 'name' must be a non-empty string"}},
		{name: "integer license", content: "---\n" + ok + "license: 2\n---\n", want: []string{"Field 'license' must be a string, not a integer"}},
		{name: "mapping compatibility", content: "---\n" + ok + "compatibility: {a: b}\n---\n", want: []string{"Field 'compatibility' must be a string, not a mapping"}},
		{name: "metadata not a mapping", content: "---\n" + ok + "metadata: [a]\n---\n", want: []string{"Field 'metadata' must be a mapping"}},
		{name: "metadata nested value, strict", content: "---\n" + ok + "metadata:\n  tags: [a, b]\n---\n", want: []string{"key 'tags' holds a list"}},
		{name: "metadata nested value, lenient", content: "---\n" + ok + "metadata:\n  tags: [a, b]\n---\n", opts: skillmd.Options{Lenient: true},
			warnings: []string{"key 'tags' holds a list"},
			check: func(t *testing.T, s *skillmd.Skill) {
				if s.Metadata["tags"] != "[a, b]" {
					t.Errorf("tags = %q", s.Metadata["tags"])
				}
			}},
		{name: "metadata literals", content: "---\n" + ok + "metadata:\n  version: 1.10\n  released: 2024-01-02\n  stable: yes\n  count: 0x1F\n  quoted: \"1.0\"\n  empty:\n---\n",
			check: func(t *testing.T, s *skillmd.Skill) {
				want := map[string]string{"version": "1.10", "released": "2024-01-02", "stable": "yes", "count": "0x1F", "quoted": "1.0", "empty": ""}
				for k, v := range want {
					if s.Metadata[k] != v {
						t.Errorf("metadata[%s] = %q, want %q", k, s.Metadata[k], v)
					}
				}
			}},
		{name: "unknown keys, lenient", content: "---\n" + ok + "version: 1.0\ntags: [x, y]\n---\n", opts: skillmd.Options{Lenient: true},
			warnings: []string{"Unexpected fields in frontmatter: version, tags"},
			check: func(t *testing.T, s *skillmd.Skill) {
				if len(s.Extra) != 2 || s.Extra["tags"] == nil {
					t.Errorf("extra = %#v", s.Extra)
				}
			}},
		{name: "long description, strict", content: "---\nname: my-skill\ndescription: " + strings.Repeat("d", 1068) + "\n---\n", want: []string{"Description exceeds 1024 character limit (1068 chars)"}},
		{name: "long fields allowed", content: "---\nname: my-skill\ndescription: " + strings.Repeat("d", 1068) + "\ncompatibility: " + strings.Repeat("c", 501) + "\n---\n",
			opts:     skillmd.Options{LongFields: true},
			warnings: []string{"Description exceeds 1024 character limit (1068 chars); kept", "Compatibility exceeds 500 character limit (501 chars); kept"},
			check: func(t *testing.T, s *skillmd.Skill) {
				if len(s.Description) != 1068 {
					t.Errorf("description of %d characters", len(s.Description))
				}
			}},
		{name: "long name, long fields allowed", content: "---\nname: " + strings.Repeat("n", 65) + "\ndescription: d\n---\n", opts: skillmd.Options{LongFields: true, Dir: strings.Repeat("n", 65)},
			want: []string{"exceeds 64 character limit"}},
		{name: "unknown keys, strict", content: "---\n" + ok + "version: 1.0\n---\n", want: []string{"Unexpected fields in frontmatter: version"}},
		{name: "block scalar description", content: "---\nname: my-skill\ndescription: |\n  Line one.\n  Line two.\n---\n",
			check: func(t *testing.T, s *skillmd.Skill) {
				if s.Description != "Line one.\nLine two." {
					t.Errorf("description = %q", s.Description)
				}
			}},
		{name: "name is trimmed and normalized", content: "---\nname: \"  ﬁle-tool \"\ndescription: d\n---\n",
			check: func(t *testing.T, s *skillmd.Skill) {
				if s.Name != "file-tool" {
					t.Errorf("name = %q, want NFKC %q", s.Name, "file-tool")
				}
			}},
		{name: "name of 64 multi-byte runes", content: "---\nname: " + strings.Repeat("я", 64) + "\ndescription: d\n---\n"},
		{name: "name of 65 runes", content: "---\nname: " + strings.Repeat("я", 65) + "\ndescription: d\n---\n", want: []string{"exceeds 64 character limit (65 chars)"}},
		{name: "description of exactly 1024 runes", content: "---\nname: my-skill\ndescription: " + strings.Repeat("é", 1024) + "\n---\n"},
		{name: "description of 1025 runes", content: "---\nname: my-skill\ndescription: " + strings.Repeat("é", 1025) + "\n---\n", want: []string{"exceeds 1024 character limit (1025 chars)"}},
		{name: "compatibility of exactly 500 runes", content: "---\n" + ok + "compatibility: " + strings.Repeat("x", 500) + "\n---\n"},
		{name: "trailing hyphen", content: "---\nname: skill-\ndescription: d\n---\n", want: []string{"cannot start or end with a hyphen"}},
		{name: "many problems at once", content: "---\nname: Bad--Name_\nextra: 1\n---\n",
			want: []string{"Unexpected fields", "must be lowercase", "consecutive hyphens", "invalid characters ('_')", "Missing required field in frontmatter: description"}},
		{name: "digits-only name", content: "---\nname: \"2048\"\ndescription: d\n---\n"},
		{name: "emoji name", content: "---\nname: rocket-🚀\ndescription: d\n---\n", want: []string{"invalid characters"}},
		{name: "directory compared after NFKC", content: "---\nname: café\ndescription: d\n---\n", opts: skillmd.Options{Dir: "cafe\u0301"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := skillmd.Check([]byte(tt.content), tt.opts)
			assertProblems(t, r, tt.want)
			if len(r.Warnings) != len(tt.warnings) {
				t.Fatalf("warnings = %v, want %q", r.Warnings, tt.warnings)
			}
			for i, w := range tt.warnings {
				if !strings.Contains(r.Warnings[i].Message, w) {
					t.Errorf("warning %d = %q, want %q", i, r.Warnings[i].Message, w)
				}
			}
			if tt.check != nil {
				if r.Skill == nil {
					t.Fatal("no skill")
				}
				tt.check(t, r.Skill)
			}
		})
	}
}

func TestProblemsNameTheirField(t *testing.T) {
	t.Parallel()
	r := skillmd.Check([]byte("---\nname: X\ncompatibility: 1\nallowed-tools: 2\nmetadata: 3\nlicense: [a]\n---\n"), skillmd.Options{Dir: "y"})
	got := map[string]int{}
	for _, e := range r.Errors {
		got[e.Field]++
	}
	want := map[string]int{"name": 2, "description": 1, "compatibility": 1, "allowed-tools": 1, "metadata": 1, "license": 1}
	for f, n := range want {
		if got[f] != n {
			t.Errorf("field %q has %d errors, want %d (all: %v)", f, got[f], n, r.Errors)
		}
	}
}

func TestParseReturnsTypedError(t *testing.T) {
	t.Parallel()
	_, _, err := skillmd.Parse([]byte("---\nname: A\n---\n"), skillmd.Options{})
	if skilld.ErrorCode(err) != skilld.EINVALID {
		t.Fatalf("code = %q, want %q (err %v)", skilld.ErrorCode(err), skilld.EINVALID, err)
	}
	if !errors.Is(err, skillmd.ErrInvalid) {
		t.Error("error must wrap skillmd.ErrInvalid")
	}
	if d := skilld.ErrorDetails(err); len(d) != 2 {
		t.Errorf("details = %v, want 2 problems", d)
	}
	if msg := err.Error(); !strings.Contains(msg, "lowercase") || !strings.Contains(msg, "and 1 more problem") {
		t.Errorf("message = %q", msg)
	}
}
