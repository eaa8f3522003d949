// Package versiondiff compares two versions of a skill: which files were
// added, removed or changed (by digest, without reading them), and the
// unified diff of one file's two texts. The web UI's diff page and
// skilld skills diff both show changes with it, so they agree on what
// changed and on what counts as text.
package versiondiff

import (
	"bytes"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/aymanbagabas/go-udiff"

	"github.com/skilld/skilld"
)

// Status says how a file changed between two versions.
type Status string

const (
	Added   Status = "added"
	Removed Status = "removed"
	Changed Status = "changed"
)

// Change is one path whose content differs between two versions. Old is
// the zero PackageFile for an added file, New for a removed one.
type Change struct {
	Path     string
	Status   Status
	Old, New skilld.PackageFile
}

// Changes lists the paths added, removed or changed from the files a of
// one version to the files b of another, sorted by path. Files whose
// digests are equal are the same and are left out.
func Changes(a, b []skilld.PackageFile) []Change {
	old := make(map[string]skilld.PackageFile, len(a))
	for _, f := range a {
		old[f.Path] = f
	}
	var out []Change
	seen := make(map[string]bool, len(b))
	for _, f := range b {
		seen[f.Path] = true
		o, ok := old[f.Path]
		switch {
		case !ok:
			out = append(out, Change{Path: f.Path, Status: Added, New: f})
		case o.Digest != f.Digest:
			out = append(out, Change{Path: f.Path, Status: Changed, Old: o, New: f})
		}
	}
	for _, f := range a {
		if !seen[f.Path] {
			out = append(out, Change{Path: f.Path, Status: Removed, Old: f})
		}
	}
	slices.SortFunc(out, func(x, y Change) int { return strings.Compare(x.Path, y.Path) })
	return out
}

// IsText is the test for a file shown and diffed as text: UTF-8 without
// NULs.
func IsText(b []byte) bool { return utf8.Valid(b) && !bytes.ContainsRune(b, 0) }

// Unified returns the unified diff from old to new under the two labels
// ("--- oldLabel", "+++ newLabel", then hunks with three lines of
// context), "" when they are equal. binary is true, with no text, when
// either side is not text.
func Unified(oldLabel, newLabel string, old, new []byte) (text string, binary bool) {
	if !IsText(old) || !IsText(new) {
		return "", true
	}
	return udiff.Unified(oldLabel, newLabel, string(old), string(new)), false
}
