//go:build unix

package skillmd_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"

	"github.com/skilld/skilld/skillmd"
)

// TestLoadMatchesFind: Load finds what Find finds, in the same order, and
// reads what reading each found file gives, on a tree with every kind of
// file a walk can meet where a SKILL.md is expected: links to files and
// folders, a FIFO (which must not block), a folder named SKILL.md, an
// empty file, a lowercase skill.md, skills nested in skills, hidden
// folders and node_modules.
func TestLoadMatchesFind(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	valid := "---\nname: x\ndescription: d\n---\nBody.\n"
	write := func(p, content string) {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"a/SKILL.md", "a/references/nested/SKILL.md", "group/b/skill.md", "group/c/SKILL.md",
		".hidden/d/SKILL.md", "node_modules/e/SKILL.md", "real/SKILL.md", "linked-dir/target/SKILL.md"} {
		write(p, valid)
	}
	write("empty/SKILL.md", "")
	write("group/notes.txt", "not a skill")
	mkdir := func(p string) {
		if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mkdir("link/inner")
	if err := os.Symlink(filepath.Join(root, "real", "SKILL.md"), filepath.Join(root, "link", "SKILL.md")); err != nil {
		t.Fatal(err)
	}
	write("link/inner/SKILL.md", valid) // found by listing, since the link is no skill file
	mkdir("fifo")
	if err := syscall.Mkfifo(filepath.Join(root, "fifo", "SKILL.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	mkdir("dirnamed/SKILL.md")
	mkdir("dirlink")
	if err := os.Symlink(filepath.Join(root, "linked-dir", "target"), filepath.Join(root, "dirlink", "SKILL.md")); err != nil {
		t.Fatal(err)
	}

	for _, start := range []string{".", "a", "group"} {
		fsys := os.DirFS(filepath.Join(root, start))
		found, err := skillmd.Find(t.Context(), fsys, ".")
		if err != nil {
			t.Fatal(err)
		}
		loaded, err := skillmd.Load(t.Context(), filepath.Join(root, start))
		if err != nil {
			t.Fatal(err)
		}
		var got []skillmd.Found
		for _, l := range loaded {
			got = append(got, l.Found)
			want, err := fs.ReadFile(fsys, l.Path())
			if err != nil || l.Err != nil || string(l.Data) != string(want) {
				t.Errorf("%s: Load read %q (%v), reading it gives %q (%v)", l.Path(), l.Data, l.Err, want, err)
			}
			if a, b := skillmd.CheckLoaded(l, skillmd.Options{}), skillmd.CheckFound(fsys, l.Found, skillmd.Options{}); !reflect.DeepEqual(a, b) {
				t.Errorf("%s: CheckLoaded %+v, CheckFound %+v", l.Path(), a, b)
			}
		}
		if !reflect.DeepEqual(got, found) {
			t.Errorf("from %s: Load found %v, Find %v", start, got, found)
		}
		if start == "." {
			var dirs []string
			for _, f := range got {
				dirs = append(dirs, f.Dir)
			}
			want := []string{".hidden/d", "a", "empty", "group/b", "group/c", "link/inner", "linked-dir/target", "real"}
			if !reflect.DeepEqual(dirs, want) {
				t.Errorf("Load found %q, want %q", dirs, want)
			}
		}
	}
	if _, err := skillmd.Load(t.Context(), filepath.Join(root, "missing")); err == nil {
		t.Error("Load of a missing root must fail")
	}
}
