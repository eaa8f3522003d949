package scaffold_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/scaffold"
	"github.com/skilld/skilld/skillmd"
)

// TestSkillMDReadsBack: whatever the name and description, the SKILL.md
// is valid and reads back as given, quoted where YAML would read it as
// something else.
func TestSkillMDReadsBack(t *testing.T) {
	descriptions := []string{
		"",
		"Plain words. Use when asked.",
		"Fill PDF forms: fields, check boxes. Use when asked.",
		"# not a comment",
		`Quotes "double" and 'single' and \backslash`,
		"- a list? [x] {y} & *z % @ ` | >",
		"two\nlines",
		"true",
		"123",
	}
	for _, name := range []string{"pdf-forms", "123", "true", "null", "yes", "навык", "技能"} {
		for _, desc := range descriptions {
			data, err := scaffold.SkillMD(name, desc)
			if err != nil {
				t.Errorf("%q %q: %v", name, desc, err)
				continue
			}
			s, _, err := skillmd.Parse(data, skillmd.Options{Dir: name})
			if err != nil {
				t.Errorf("%q %q: the SKILL.md is invalid: %v\n%s", name, desc, err, data)
				continue
			}
			want := strings.TrimSpace(desc)
			if want == "" {
				want = scaffold.PlaceholderDescription(name)
			}
			if s.Name != name || s.Description != want {
				t.Errorf("%q %q: read back as %q %q\n%s", name, desc, s.Name, s.Description, data)
			}
		}
	}
	// Plain YAML where it is safe.
	data, _ := scaffold.SkillMD("pdf-forms", "Plain words. Use when asked.")
	if !strings.HasPrefix(string(data), "---\nname: pdf-forms\ndescription: Plain words. Use when asked.\n---\n") {
		t.Errorf("plain values were quoted:\n%s", data)
	}
}

func TestSkillMDRefuses(t *testing.T) {
	for _, tc := range []struct{ name, desc, want string }{
		{"", "", "required"},
		{"Bad_Name", "", "must be lowercase"},
		{" padded", "", "normal form"},
		{"ﬁle", "", "normal form"}, // NFKC makes it "file"
		{"ok", strings.Repeat("d", 1025), "1024 character limit"},
	} {
		_, err := scaffold.SkillMD(tc.name, tc.desc)
		if skilld.ErrorCode(err) != skilld.EINVALID || !strings.Contains(skilld.ErrorMessage(err), tc.want) {
			t.Errorf("%q: %v, want EINVALID with %q", tc.name, err, tc.want)
		}
	}
}

func TestCreate(t *testing.T) {
	dir := t.TempDir()
	file, err := scaffold.Create(dir, "tables", "")
	if err != nil || file != filepath.Join(dir, "tables", "SKILL.md") {
		t.Fatalf("Create: %q %v", file, err)
	}
	if r := skillmd.CheckDir(os.DirFS(dir), "tables", skillmd.Options{}); !r.Valid() {
		t.Errorf("the new skill is invalid: %v", r.Errors)
	}
	if _, err := scaffold.Create(dir, "tables", ""); skilld.ErrorCode(err) != skilld.ECONFLICT {
		t.Errorf("Create over an existing folder: %v", err)
	}
	if _, err := scaffold.Create(filepath.Join(dir, "missing"), "x", ""); err == nil || skilld.ErrorCode(err) != skilld.EINTERNAL {
		t.Errorf("Create in a folder that does not exist: %v", err)
	}
}
