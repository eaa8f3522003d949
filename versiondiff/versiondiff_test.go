package versiondiff_test

import (
	"slices"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/versiondiff"
)

func TestChanges(t *testing.T) {
	a := []skilld.PackageFile{{Path: "SKILL.md", Digest: "sha256:1"}, {Path: "old.md", Digest: "sha256:2"}, {Path: "same.sh", Digest: "sha256:3"}}
	b := []skilld.PackageFile{{Path: "new.md", Digest: "sha256:4"}, {Path: "same.sh", Digest: "sha256:3"}, {Path: "SKILL.md", Digest: "sha256:5"}}
	var got []string
	for _, c := range versiondiff.Changes(a, b) {
		got = append(got, string(c.Status)+" "+c.Path+" "+c.Old.Digest+">"+c.New.Digest)
	}
	want := []string{"changed SKILL.md sha256:1>sha256:5", "added new.md >sha256:4", "removed old.md sha256:2>"}
	if !slices.Equal(got, want) {
		t.Errorf("%q, want %q", got, want)
	}
	if c := versiondiff.Changes(a, a); len(c) != 0 {
		t.Errorf("a version against itself: %v", c)
	}
}

func TestUnified(t *testing.T) {
	text, binary := versiondiff.Unified("a/x", "b/x", []byte("one\ntwo\n"), []byte("one\n2\n"))
	want := "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n"
	if binary || text != want {
		t.Errorf("%q, want %q", text, want)
	}
	if text, binary := versiondiff.Unified("/dev/null", "b/x", nil, []byte("new\n")); binary || text != "--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+new\n" {
		t.Errorf("an added file: %q", text)
	}
	if text, _ := versiondiff.Unified("a/x", "b/x", []byte("same"), []byte("same")); text != "" {
		t.Errorf("equal texts: %q", text)
	}
	for _, bin := range [][]byte{{0x89, 'P', 'N', 'G', 0}, {0xff, 0xfe}} {
		if text, binary := versiondiff.Unified("a/x", "b/x", []byte("text\n"), bin); !binary || text != "" {
			t.Errorf("%q: binary %v, %q", bin, binary, text)
		}
	}
}
