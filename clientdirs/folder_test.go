package clientdirs

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skilld/skilld/internal/testtree"
	"github.com/skilld/skilld/pack"
)

// pkgOf builds a package; paths ending in .sh are executable.
func pkgOf(t *testing.T, files map[string]string) *pack.Package {
	t.Helper()
	var fs []pack.File
	for p, c := range files {
		fs = append(fs, pack.File{Path: p, Data: []byte(c), Exec: strings.HasSuffix(p, ".sh")})
	}
	p, err := pack.New(fs, pack.ArchiveLimits())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func tree(t *testing.T, dir string) map[string]string { return testtree.Read(t, dir) }

func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// A folder written from a package has the package's digest when read back,
// with its executables executable; rewriting replaces every file and leaves
// nothing beside the folder.
func TestWriteSkillAndDigest(t *testing.T) {
	ctx := t.Context()
	skills := t.TempDir()
	dir := filepath.Join(skills, "notes")
	v1 := pkgOf(t, map[string]string{"SKILL.md": "one", "scripts/run.sh": "#!/bin/sh\n", "refs/a/b.md": "deep"})
	if err := WriteSkill(ctx, dir, v1); err != nil {
		t.Fatal(err)
	}
	if got, want := tree(t, dir), map[string]string{"SKILL.md": "one", "scripts/run.sh*": "#!/bin/sh\n", "refs/a/b.md": "deep"}; !maps.Equal(got, want) {
		t.Errorf("written: %v, want %v", got, want)
	}
	d, exists, err := FolderDigest(ctx, dir)
	if err != nil || !exists || d != v1.Digest() {
		t.Errorf("FolderDigest = %s, %v, %v; want %s", d, exists, err, v1.Digest())
	}
	v2 := pkgOf(t, map[string]string{"SKILL.md": "two"})
	if err := WriteSkill(ctx, dir, v2); err != nil {
		t.Fatal(err)
	}
	if got := tree(t, dir); !maps.Equal(got, map[string]string{"SKILL.md": "two"}) {
		t.Errorf("rewritten: %v", got)
	}
	if got := names(t, skills); !slices.Equal(got, []string{"notes"}) {
		t.Errorf("the skills folder holds %q, want only notes", got)
	}

	// Any local change shows in the digest, an exec bit included.
	if err := os.Chmod(filepath.Join(dir, "SKILL.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	if d, _, _ := FolderDigest(ctx, dir); d == v2.Digest() {
		t.Error("making a file executable left the digest as it was")
	}
	// A link inside is not a skill folder skilld would write.
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if _, exists, err := FolderDigest(ctx, dir); err == nil || !exists {
		t.Errorf("a folder holding a link: exists %v, %v; want an error", exists, err)
	}
	if _, exists, err := FolderDigest(ctx, filepath.Join(skills, "none")); err != nil || exists {
		t.Errorf("no folder: exists %v, %v", exists, err)
	}
	if err := os.WriteFile(filepath.Join(skills, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, exists, err := FolderDigest(ctx, filepath.Join(skills, "file")); err == nil || !exists {
		t.Errorf("a file where the folder goes: exists %v, %v; want an error", exists, err)
	}
}

// A write that fails part way leaves the previous folder as it was and no
// temporary folder behind.
func TestWriteSkillInterrupted(t *testing.T) {
	skills := t.TempDir()
	dir := filepath.Join(skills, "notes")
	v1 := pkgOf(t, map[string]string{"SKILL.md": "one"})
	if err := WriteSkill(t.Context(), dir, v1); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := WriteSkill(ctx, dir, pkgOf(t, map[string]string{"SKILL.md": "two", "b.md": "b"})); err == nil {
		t.Fatal("a cancelled write succeeded")
	}
	if got := tree(t, dir); !maps.Equal(got, map[string]string{"SKILL.md": "one"}) {
		t.Errorf("after a failed write: %v", got)
	}
	if got := names(t, skills); !slices.Equal(got, []string{"notes"}) {
		t.Errorf("the skills folder holds %q after a failed write", got)
	}
}

func TestRemoveSkillAndLeftovers(t *testing.T) {
	skills := t.TempDir()
	for _, d := range []string{"notes/x", ".skilld-new-notes-123/y", ".skilld-old-notes-abc", ".hidden", "other"} {
		if err := os.MkdirAll(filepath.Join(skills, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := CleanLeftovers(skills); err != nil {
		t.Fatal(err)
	}
	if got := names(t, skills); !slices.Equal(got, []string{".hidden", "notes", "other"}) {
		t.Errorf("after cleaning: %q", got)
	}
	if err := RemoveSkill(filepath.Join(skills, "notes")); err != nil {
		t.Fatal(err)
	}
	if err := RemoveSkill(filepath.Join(skills, "notes")); err != nil {
		t.Errorf("removing a missing folder: %v", err)
	}
	if got := names(t, skills); !slices.Equal(got, []string{".hidden", "other"}) {
		t.Errorf("after removing notes: %q", got)
	}
	if err := CleanLeftovers(filepath.Join(skills, "missing")); err != nil {
		t.Errorf("cleaning a missing folder: %v", err)
	}
}
