package pack_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/skillmd"
)

func newPackage(t *testing.T, paths ...string) *pack.Package {
	t.Helper()
	files := make([]pack.File, len(paths))
	for i, p := range paths {
		files[i] = pack.File{Path: p, Data: []byte("data of " + p)}
	}
	p, err := pack.New(files, pack.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSkillDirs(t *testing.T) {
	for _, tc := range []struct {
		name  string
		paths []string
		want  []string
	}{
		{"a skill at the root", []string{"SKILL.md", "sub/SKILL.md", "x.md"}, []string{"."}},
		{"lowercase skill.md at the root", []string{"skill.md"}, []string{"."}},
		{"none", []string{"README.md", "docs/x.md"}, nil},
		{"several", []string{"b/SKILL.md", "a/SKILL.md", "a/ref.md", "c/d/skill.md", "README.md"}, []string{"a", "b", "c/d"}},
		{"nested skills are part of theirs", []string{"a/SKILL.md", "a/examples/e/SKILL.md", "a-b/SKILL.md"}, []string{"a", "a-b"}},
		{"segment order, as a directory walk", []string{"a-b/SKILL.md", "a/x/SKILL.md"}, []string{"a/x", "a-b"}},
		{"skipped folders", []string{"node_modules/m/SKILL.md", "x/.git/y/SKILL.md", "ok/SKILL.md"}, []string{"ok"}},
		{"other cases are not skill files", []string{"a/Skill.md", "b/SKILL.MD"}, nil},
	} {
		if got := newPackage(t, tc.paths...).SkillDirs(); !slices.Equal(got, tc.want) {
			t.Errorf("%s: SkillDirs = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestSkillDirsAsDiscover: the package's skills are those skillmd.Discover
// finds in the same files on disk, so an archive and its unpacked folder
// are described alike.
func TestSkillDirsAsDiscover(t *testing.T) {
	paths := []string{"tools/lint/SKILL.md", "tools/lint/refs/inner/SKILL.md", "tools/fmt/skill.md", "data/SKILL.md",
		"node_modules/dep/SKILL.md", ".agents/skills/hidden/SKILL.md", "README.md", "a-b/SKILL.md", "a/b/SKILL.md"}
	dir := t.TempDir()
	for _, p := range paths {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := skillmd.Discover(t.Context(), os.DirFS(dir), ".")
	if err != nil {
		t.Fatal(err)
	}
	if got := newPackage(t, paths...).SkillDirs(); !slices.Equal(got, want) {
		t.Errorf("SkillDirs = %q, Discover = %q", got, want)
	}
}

func TestSub(t *testing.T) {
	whole := newPackage(t, "a/SKILL.md", "a/scripts/run.sh", "b/SKILL.md")
	sub, err := whole.Sub("a")
	if err != nil {
		t.Fatal(err)
	}
	alone := newPackage(t, "SKILL.md", "scripts/run.sh")
	// The same bytes under the same paths: the files of "a" read alone.
	files := alone.Files()
	for i := range files {
		files[i].Data = []byte("data of a/" + files[i].Path)
	}
	alone, err = pack.New(files, pack.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if sub.Digest() != alone.Digest() || sub.TopDir() != "a" || sub.Len() != 2 {
		t.Errorf("Sub(a): %s top %q, %d files; want %s", sub.Digest(), sub.TopDir(), sub.Len(), alone.Digest())
	}
	if same, err := whole.Sub("."); err != nil || same != whole {
		t.Errorf("Sub(.) = %v, %v", same, err)
	}
	if _, err := whole.Sub("c"); err == nil {
		t.Error("Sub of a missing folder must fail")
	}
}

func TestDescribeSkills(t *testing.T) {
	if got := pack.DescribeSkills([]string{"tools/lint"}); got != "1 skill (tools/lint)" {
		t.Errorf("one: %q", got)
	}
	if got := pack.DescribeSkills([]string{"a", "b", "c", "d"}); got != "4 skills (a, b, c, d)" {
		t.Errorf("four: %q", got)
	}
	var many []string
	for i := range 12 {
		many = append(many, string(rune('a'+i)))
	}
	if got := pack.DescribeSkills(many); !strings.HasSuffix(got, "j, and 2 more)") || !strings.HasPrefix(got, "12 skills (a, b,") {
		t.Errorf("twelve: %q", got)
	}
}
