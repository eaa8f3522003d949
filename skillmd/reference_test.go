package skillmd_test

// The cases in this file are the facts of the reference validator's test suite
// (skills-ref: validator, parser and prompt tests), restated as tables. Each
// runs on real files in a temporary directory.

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/skilld/skilld/skillmd"
)

// writeSkill creates dir/<file> under a fresh temp dir and returns the temp
// dir; dir may hold any Unicode the file system accepts.
func writeSkill(t *testing.T, dir, file, content string) string {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if file != "" {
		if err := os.WriteFile(filepath.Join(root, dir, file), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func fm(lines ...string) string {
	return "---\n" + strings.Join(lines, "\n") + "\n---\nBody\n"
}

func TestReferenceValidator(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 70)
	tests := []struct {
		name    string
		dir     string
		content string
		want    []string // substrings, one per expected error; nil means valid
	}{
		{"valid skill", "my-skill", "---\nname: my-skill\ndescription: A test skill\n---\n# My Skill\n", nil},
		{"uppercase name", "MySkill", fm("name: MySkill", "description: A test skill"), []string{"lowercase"}},
		{"name too long", long, fm("name: "+long, "description: A test skill"), []string{"exceeds 64 character limit"}},
		{"leading hyphen", "-my-skill", fm("name: -my-skill", "description: A test skill"), []string{"cannot start or end with a hyphen"}},
		{"consecutive hyphens", "my--skill", fm("name: my--skill", "description: A test skill"), []string{"consecutive hyphens"}},
		{"invalid characters", "my_skill", fm("name: my_skill", "description: A test skill"), []string{"invalid characters"}},
		{"directory mismatch", "wrong-name", fm("name: correct-name", "description: A test skill"), []string{"must match skill name"}},
		{"unexpected fields", "my-skill", fm("name: my-skill", "description: A test skill", "unknown_field: should not be here"), []string{"Unexpected fields"}},
		{"all fields", "my-skill", fm("name: my-skill", "description: A test skill", "license: MIT", "metadata:", "  author: Test"), nil},
		{"allowed-tools string", "my-skill", fm("name: my-skill", "description: A test skill", "allowed-tools: Bash(jq:*) Bash(git:*)"), nil},
		{"allowed-tools inline list", "my-skill", fm("name: my-skill", "description: A test skill", "allowed-tools: [Read, Write, Edit, Bash]"), nil},
		{"allowed-tools block list", "my-skill", fm("name: my-skill", "description: A test skill", "allowed-tools:", "  - Read", "  - Bash", "  - Grep"), nil},
		{"allowed-tools list items must be strings", "my-skill", fm("name: my-skill", "description: A test skill", "allowed-tools:", "  - Read", "  - 123"), []string{"list items must all be strings"}},
		{"allowed-tools scalar must be a string", "my-skill", fm("name: my-skill", "description: A test skill", "allowed-tools: 123"), []string{"must be either a string or a list of strings"}},
		{"chinese name", "技能", fm("name: 技能", "description: A skill with Chinese name"), nil},
		{"russian name with hyphens", "мой-навык", fm("name: мой-навык", "description: A skill with Russian name"), nil},
		{"russian lowercase", "навык", fm("name: навык", "description: A skill with Russian lowercase name"), nil},
		{"russian uppercase", "НАВЫК", fm("name: НАВЫК", "description: A skill with Russian uppercase name"), []string{"lowercase"}},
		{"description too long", "my-skill", fm("name: my-skill", "description: "+strings.Repeat("x", 1100)), []string{"exceeds 1024"}},
		{"valid compatibility", "my-skill", fm("name: my-skill", "description: A test skill", "compatibility: Requires Python 3.11+"), nil},
		{"compatibility too long", "my-skill", fm("name: my-skill", "description: A test skill", "compatibility: "+strings.Repeat("x", 550)), []string{"exceeds 500"}},
		{"NFKC normalization", "café", fm("name: cafe\u0301", "description: A test skill"), nil},
		{"missing name", "my-skill", fm("description: A test skill"), []string{"Missing required field in frontmatter: name"}},
		{"missing description", "my-skill", fm("name: my-skill"), []string{"Missing required field in frontmatter: description"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := writeSkill(t, tt.dir, "SKILL.md", tt.content)
			r := skillmd.CheckDir(os.DirFS(root), tt.dir, skillmd.Options{})
			assertProblems(t, r, tt.want)
		})
	}
}

// assertProblems checks that r has exactly len(want) errors, each containing
// the corresponding substring.
func assertProblems(t *testing.T, r *skillmd.Report, want []string) {
	t.Helper()
	if len(r.Errors) != len(want) {
		t.Fatalf("got %d errors %v, want %d matching %q", len(r.Errors), r.Errors, len(want), want)
	}
	for i, w := range want {
		if !strings.Contains(r.Errors[i].Message, w) {
			t.Errorf("error %d = %q, want it to contain %q", i, r.Errors[i].Message, w)
		}
	}
	if r.Valid() != (len(want) == 0) {
		t.Errorf("Valid() = %v with errors %v", r.Valid(), r.Errors)
	}
}

func TestReferenceValidatorPaths(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "file.txt"), []byte("test"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "my-skill"), 0o755); err != nil {
		t.Fatal(err)
	}
	fsys := os.DirFS(root)
	for _, tt := range []struct{ dir, want string }{
		{"nonexistent", "does not exist"},
		{"file.txt", "Not a directory"},
		{"my-skill", "Missing required file: SKILL.md"},
	} {
		assertProblems(t, skillmd.CheckDir(fsys, tt.dir, skillmd.Options{}), []string{tt.want})
	}
}

func TestReferenceParser(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		content string
		want    []string
	}{
		{"missing frontmatter", "# No frontmatter here", []string{"must start with YAML frontmatter"}},
		{"unclosed frontmatter", "---\nname: my-skill\ndescription: A test skill\n", []string{"not properly closed"}},
		{"invalid YAML", "---\nname: [invalid\ndescription: broken\n---\nBody here\n", []string{"Invalid YAML"}},
		{"non-mapping frontmatter", "---\n- just\n- a\n- list\n---\nBody\n", []string{"must be a YAML mapping"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := skillmd.Check([]byte(tt.content), skillmd.Options{})
			assertProblems(t, r, tt.want)
			if r.Skill != nil {
				t.Errorf("a file that does not parse must not yield a skill, got %+v", r.Skill)
			}
		})
	}
}

func TestReferenceParserProperties(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		content string
		want    skillmd.Skill
	}{
		{
			"valid frontmatter",
			"---\nname: my-skill\ndescription: A test skill\n---\n# My Skill\n\nInstructions here.\n",
			skillmd.Skill{Name: "my-skill", Description: "A test skill", Body: "# My Skill\n\nInstructions here."},
		},
		{
			"license",
			"---\nname: my-skill\ndescription: A test skill\nlicense: MIT\n---\n# My Skill\n",
			skillmd.Skill{Name: "my-skill", Description: "A test skill", License: "MIT", Body: "# My Skill"},
		},
		{
			"metadata keeps literal text",
			fm("name: my-skill", "description: A test skill", "metadata:", "  author: Test Author", "  version: 1.0"),
			skillmd.Skill{Name: "my-skill", Description: "A test skill", Body: "Body",
				Metadata: map[string]string{"author": "Test Author", "version": "1.0"}},
		},
		{
			"allowed-tools string",
			fm("name: my-skill", "description: A test skill", "allowed-tools: Bash(jq:*) Bash(git:*)"),
			skillmd.Skill{Name: "my-skill", Description: "A test skill", Body: "Body", AllowedTools: []string{"Bash(jq:*)", "Bash(git:*)"}},
		},
		{
			"allowed-tools inline list",
			fm("name: my-skill", "description: A test skill", "allowed-tools: [Read, Write, Bash]"),
			skillmd.Skill{Name: "my-skill", Description: "A test skill", Body: "Body", AllowedTools: []string{"Read", "Write", "Bash"}},
		},
		{
			"allowed-tools block list",
			fm("name: my-skill", "description: A test skill", "allowed-tools:", "  - Read", "  - Bash", "  - Grep"),
			skillmd.Skill{Name: "my-skill", Description: "A test skill", Body: "Body", AllowedTools: []string{"Read", "Bash", "Grep"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, warnings, err := skillmd.Parse([]byte(tt.content), skillmd.Options{})
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if len(warnings) != 0 {
				t.Errorf("unexpected warnings %v", warnings)
			}
			if !reflect.DeepEqual(*s, tt.want) {
				t.Errorf("got  %+v\nwant %+v", *s, tt.want)
			}
		})
	}
}

func TestReferenceFindSkillFile(t *testing.T) {
	t.Parallel()
	valid := "---\nname: my-skill\ndescription: A test skill\n---\n# My Skill\n"
	t.Run("prefers uppercase", func(t *testing.T) {
		root := writeSkill(t, "my-skill", "SKILL.md", valid)
		if err := os.WriteFile(filepath.Join(root, "my-skill", "skill.md"), []byte("lowercase"), 0o644); err != nil {
			t.Fatal(err)
		}
		assertProblems(t, skillmd.CheckDir(os.DirFS(root), "my-skill", skillmd.Options{}), nil)
	})
	t.Run("accepts lowercase", func(t *testing.T) {
		root := writeSkill(t, "my-skill", "skill.md", valid)
		r := skillmd.CheckDir(os.DirFS(root), "my-skill", skillmd.Options{})
		assertProblems(t, r, nil)
		if r.Skill.Name != "my-skill" || r.Skill.Description != "A test skill" {
			t.Errorf("read %+v", r.Skill)
		}
	})
	t.Run("none", func(t *testing.T) {
		if got := skillmd.Filename(func(string) bool { return false }); got != "" {
			t.Errorf("Filename = %q, want empty", got)
		}
	})
}

func TestDiscover(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	valid := "---\nname: x\ndescription: d\n---\n"
	for _, p := range []string{
		"a/SKILL.md", "a/references/nested/SKILL.md", // nested inside a skill: not separate
		"group/b/skill.md", "group/c/SKILL.md", "group/notes.txt",
		".hidden/d/SKILL.md", "node_modules/e/SKILL.md", "empty/readme.md",
		".git/f/SKILL.md", ".hg/g/SKILL.md", ".svn/h/SKILL.md", "repo/.claude/skills/i/SKILL.md",
	} {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(valid), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := skillmd.Discover(t.Context(), os.DirFS(root), ".")
	if err != nil {
		t.Fatal(err)
	}
	// Hidden folders are searched (.claude/skills is where agents look);
	// version control and node_modules are not.
	want := []string{".hidden/d", "a", "group/b", "group/c", "repo/.claude/skills/i"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Discover = %q, want %q", got, want)
	}
	got, err = skillmd.Discover(t.Context(), os.DirFS(root), "a")
	if err != nil || !reflect.DeepEqual(got, []string{"a"}) {
		t.Errorf("Discover(skill dir) = %q, %v", got, err)
	}
	if _, err := skillmd.Discover(t.Context(), os.DirFS(root), "missing"); err == nil {
		t.Error("Discover of a missing root must fail")
	}
}
