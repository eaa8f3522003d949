package store

import (
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// MaxSlugLength caps slugs (in bytes; slugs are ASCII).
const MaxSlugLength = 100

// Slugify derives the URL slug of a name: NFKD, accents and other non-ASCII
// dropped, lowercase, every run of other characters turned into one "-",
// trimmed, at most 100 characters, and "item" when nothing is left. Slugs
// are ASCII so they are safe in URLs and on every file system.
func Slugify(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range norm.NFKD.String(name) {
		if r > unicode.MaxASCII {
			continue // combining marks and letters without an ASCII form
		}
		r = unicode.ToLower(r)
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	s := b.String()
	if len(s) > MaxSlugLength {
		s = strings.TrimRight(s[:MaxSlugLength], "-")
	}
	if s == "" {
		return "item"
	}
	return s
}

// SlugCandidate returns the n-th slug to try for a base slug: the base
// itself for n 1, then base-2 … base-999, keeping the result within
// MaxSlugLength.
func SlugCandidate(base string, n int) string {
	if n <= 1 {
		return base
	}
	suffix := "-" + strconv.Itoa(n)
	if len(base)+len(suffix) > MaxSlugLength {
		base = strings.TrimRight(base[:MaxSlugLength-len(suffix)], "-")
	}
	return base + suffix
}

// MaxSlugSuffix is the last suffix tried before giving up.
const MaxSlugSuffix = 999

// SearchText is what list filters search: name and description, lowercased
// with Unicode rules (the databases' own lower() is ASCII-only in SQLite).
func SearchText(name, description string) string {
	return strings.ToLower(name + "\n" + description)
}

// LikePattern turns a search string into a LIKE pattern matching it as a
// case-insensitive substring, with LIKE's wildcards escaped (ESCAPE '\').
func LikePattern(search string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(strings.ToLower(search)) + "%"
}
