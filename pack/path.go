package pack

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// CheckPath reports whether p is a safe package path: a relative,
// slash-separated path of non-empty segments that, written below any
// directory on any common operating system, stays below it and names the same
// file. It returns an error wrapping ErrUnsafePath that quotes p and names the
// rule it breaks.
//
// Depth and the Limits-specific length cap are not checked here because they
// depend on the limits in force; New checks them.
func CheckPath(p string) error {
	switch {
	case p == "":
		return pathErr(ErrUnsafePath, p, "is empty")
	case len(p) > MaxPathLen:
		return pathErr(ErrUnsafePath, p, "is %d bytes long, over the %d-byte limit", len(p), MaxPathLen)
	case !utf8.ValidString(p):
		return pathErr(ErrUnsafePath, p, "is not valid UTF-8")
	case strings.HasPrefix(p, "/"):
		return pathErr(ErrUnsafePath, p, "is absolute; paths must be relative to the package root")
	case hasDrivePrefix(p):
		return pathErr(ErrUnsafePath, p, "starts with a drive letter; paths must be relative to the package root")
	}
	for _, r := range p {
		switch {
		case r == 0:
			return pathErr(ErrUnsafePath, p, "contains a NUL byte")
		case r == '\\':
			// Windows treats it as a separator, so "a\..\..\x" would
			// escape there even though it is one segment here.
			return pathErr(ErrUnsafePath, p, "contains a backslash; use / to separate folders")
		case unicode.IsControl(r):
			return pathErr(ErrUnsafePath, p, "contains the control character %U", r)
		}
	}
	for seg := range strings.SplitSeq(p, "/") {
		switch seg {
		case "":
			return pathErr(ErrUnsafePath, p, "has an empty segment (a leading, trailing or doubled /)")
		case ".":
			return pathErr(ErrUnsafePath, p, "has a %q segment; paths must be in canonical form", seg)
		case "..":
			return pathErr(ErrUnsafePath, p, "has a %q segment; paths must stay inside the package", seg)
		}
	}
	return nil
}

// hasDrivePrefix reports a Windows drive prefix such as "C:" at the start.
// Only the first segment matters: "a/C:" is an odd but harmless name.
func hasDrivePrefix(p string) bool {
	return len(p) >= 2 && p[1] == ':' && ('a' <= p[0]|0x20 && p[0]|0x20 <= 'z')
}

// depth is the number of segments of a checked path.
func depth(p string) int { return strings.Count(p, "/") + 1 }

// IsSkillMD reports whether path is a SKILL.md at the package root, ignoring
// ASCII case. Only ASCII letters are folded: a name that matches only under
// Unicode folding (with a Kelvin sign K or a long s ſ) is not what a runtime
// looking for SKILL.md would open, so it must not be taken for one.
func IsSkillMD(path string) bool {
	const name = "skill.md"
	if len(path) != len(name) {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := path[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != name[i] {
			return false
		}
	}
	return true
}

// folder computes collision keys: two paths with equal keys would name the
// same file on a case-insensitive or normalizing filesystem (macOS, Windows),
// so a package may not hold both. The key is canonical caseless matching from
// the Unicode standard, NFD(fold(NFD(p))); comparing those is the same as
// comparing NFC forms after full case folding. A Caser keeps state, hence one
// folder per use instead of a shared one.
type folder struct{ c cases.Caser }

func newFolder() *folder { return &folder{c: cases.Fold()} }

func (f *folder) key(p string) string {
	return norm.NFD.String(f.c.String(norm.NFD.String(p)))
}

// checkCollisions rejects paths that are equal, equal under folding, or a
// file that is also a folder of another path (compared folded too). paths
// must be sorted; the first offending path in that order is reported, so the
// message does not depend on input order.
func checkCollisions(paths []string) error {
	f := newFolder()
	files := make(map[string]string, len(paths))
	dirs := make(map[string]string)
	keys := make([]string, len(paths))
	for i, p := range paths {
		if i > 0 && paths[i-1] == p {
			return pathErr(ErrPathCollision, p, "appears more than once")
		}
		k := f.key(p)
		keys[i] = k
		if other, ok := files[k]; ok {
			if norm.NFC.String(p) == norm.NFC.String(other) {
				// Both print alike; show the code points.
				return pathErr(ErrPathCollision, p, "collides with %q (they differ only in Unicode normalization: %+q vs %+q)", other, p, other)
			}
			return pathErr(ErrPathCollision, p, "collides with %q (same name ignoring case and Unicode normalization)", other)
		}
		files[k] = p
		for j := 0; j < len(k); j++ {
			if k[j] == '/' {
				if _, ok := dirs[k[:j]]; !ok {
					dirs[k[:j]] = p
				}
			}
		}
	}
	for i, p := range paths {
		if other, ok := dirs[keys[i]]; ok {
			return pathErr(ErrPathCollision, p, "collides with %q: it cannot be both a file and a folder", other)
		}
	}
	return nil
}
