package pack

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/skilld/skilld"
)

// The manifest format is specified in docs/PACKAGE-FORMAT.md; keep the two in
// step, other tools recompute digests from that text.
const (
	modeRegular = "100644"
	modeExec    = "100755"
	// digestPrefix names the hash so the algorithm can change some day
	// without two schemes ever producing comparable-looking strings.
	digestPrefix = "sha256:"
)

// BuildManifest renders the manifest of entries (in any order) and returns it
// with its digest, "sha256:" and the lowercase hex SHA-256 of the manifest.
//
// Entries are trusted: their paths should pass CheckPath and their Digest
// should be "sha256:<64 hex>", as New and ParseManifest produce. BuildManifest
// does not validate them because it has no error to return; feeding it
// anything else yields a manifest that ParseManifest rejects.
func BuildManifest(entries []Entry) (manifest []byte, digest string) {
	sorted := slices.Clone(entries)
	slices.SortFunc(sorted, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
	n := 0
	for _, e := range sorted {
		n += len(modeRegular) + 1 + 20 + 1 + sha256.Size*2 + 1 + len(e.Path) + 1
	}
	manifest = make([]byte, 0, n)
	for _, e := range sorted {
		mode := modeRegular
		if e.Exec {
			mode = modeExec
		}
		manifest = append(manifest, mode...)
		manifest = append(manifest, ' ')
		manifest = strconv.AppendInt(manifest, e.Size, 10)
		manifest = append(manifest, ' ')
		manifest = append(manifest, strings.TrimPrefix(e.Digest, digestPrefix)...)
		manifest = append(manifest, ' ')
		manifest = append(manifest, e.Path...)
		manifest = append(manifest, '\n')
	}
	return manifest, digestOf(manifest)
}

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return digestPrefix + hex.EncodeToString(sum[:])
}

// ParseManifest is the strict inverse of BuildManifest: it accepts exactly
// the byte strings BuildManifest can produce for a valid package, so that
// BuildManifest(ParseManifest(b)) == b whenever it succeeds. Anything else
// (unsorted or duplicate lines, colliding paths, uppercase or short hex, a
// size with a sign or leading zero, a missing final newline, an unknown mode,
// a path that fails CheckPath) is refused with an EINVALID error.
func ParseManifest(b []byte) ([]Entry, error) {
	var entries []Entry
	var paths []string
	for line := 1; len(b) > 0; line++ {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return nil, manifestErr(line, "does not end with a newline")
		}
		e, err := parseManifestLine(string(b[:i]))
		if err != nil {
			return nil, skilld.Errorf(skilld.EINVALID, "manifest line %d %w", line, err)
		}
		if n := len(entries); n > 0 && entries[n-1].Path >= e.Path {
			return nil, manifestErr(line, "is not in strictly increasing path order")
		}
		entries = append(entries, e)
		paths = append(paths, e.Path)
		b = b[i+1:]
	}
	if err := checkCollisions(paths); err != nil {
		return nil, skilld.Errorf(skilld.EINVALID, "manifest: %w", err)
	}
	return entries, nil
}

func manifestErr(line int, why string) error {
	return skilld.Errorf(skilld.EINVALID, "manifest line %d %s", line, why)
}

func parseManifestLine(s string) (Entry, error) {
	mode, rest, ok1 := strings.Cut(s, " ")
	size, rest, ok2 := strings.Cut(rest, " ")
	sum, path, ok3 := strings.Cut(rest, " ")
	if !ok1 || !ok2 || !ok3 {
		return Entry{}, fmt.Errorf("does not have the form <mode> <size> <sha256> <path>")
	}
	var e Entry
	switch mode {
	case modeRegular:
	case modeExec:
		e.Exec = true
	default:
		return Entry{}, fmt.Errorf("has mode %q; want %s or %s", mode, modeRegular, modeExec)
	}
	n, err := strconv.ParseInt(size, 10, 64)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != size {
		return Entry{}, fmt.Errorf("has size %q; want a decimal number without sign or leading zeros", size)
	}
	e.Size = n
	if !isLowerHex(sum, sha256.Size*2) {
		return Entry{}, fmt.Errorf("has hash %q; want %d lowercase hex digits", sum, sha256.Size*2)
	}
	e.Digest = digestPrefix + sum
	if err := CheckPath(path); err != nil {
		return Entry{}, fmt.Errorf("has a bad path: %w", err)
	}
	e.Path = path
	return e, nil
}

func isLowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
