package service

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// MaxDisplayNameLength is the longest display name in characters (runes),
// counted after normalization.
const MaxDisplayNameLength = 64

// DisplayName checks a human-chosen name (agents, tokens) and returns the
// form to store: its NFKC normalization. Names show up in lists, logs,
// audit events and terminals, so the rule keeps out what can hide or
// disguise text there: control, format (zero-width, bidi overrides),
// private-use, surrogate and unassigned characters, any whitespace but a
// single U+0020 between words, and path-like names. Storing the normalized
// form is what makes the store's uniqueness hold after normalization:
// "ｆｏｏ" and "foo" are the same name.
func DisplayName(field, name string) (string, error) {
	if !utf8.ValidString(name) {
		return "", invalidField(field, "%s is not valid UTF-8", field)
	}
	// Characters are checked before normalizing too: NFKC maps some format
	// characters away, and a name that needed them to look right is refused
	// rather than silently changed into something else.
	if err := displayChars(field, name); err != nil {
		return "", err
	}
	n := norm.NFKC.String(name)
	if err := displayChars(field, n); err != nil {
		return "", err
	}
	switch l := utf8.RuneCountInString(n); {
	case l == 0:
		return "", invalidField(field, "%s must not be empty", field)
	case l > MaxDisplayNameLength:
		return "", invalidField(field, "%s is %d characters long; the limit is %d", field, l, MaxDisplayNameLength)
	}
	switch {
	case strings.TrimSpace(n) == "":
		return "", invalidField(field, "%s must not be blank", field)
	case n[0] == ' ' || n[len(n)-1] == ' ':
		return "", invalidField(field, "%s %q must not start or end with a space", field, n)
	case strings.Contains(n, "  "):
		return "", invalidField(field, "%s %q must not contain two spaces in a row", field, n)
	case n == "." || n == "..":
		return "", invalidField(field, "%s must not be %q", field, n)
	case strings.ContainsAny(n, `/\`):
		return "", invalidField(field, "%s %q must not contain '/' or '\\'", field, n)
	}
	return n, nil
}

// displayChars refuses the first character a display name may not hold,
// naming it by code point so an invisible one can be found.
func displayChars(field, s string) error {
	for i, r := range s {
		if why := displayRune(r); why != "" {
			return invalidField(field, "%s contains %s U+%04X at byte %d", field, why, r, i)
		}
	}
	return nil
}

func displayRune(r rune) string {
	switch {
	case r == ' ':
		return ""
	case unicode.Is(unicode.Cc, r):
		return "the control character"
	case unicode.Is(unicode.Cf, r):
		return "the invisible formatting character"
	case unicode.Is(unicode.Cs, r):
		return "the surrogate character"
	case r == utf8.RuneError:
		return "the replacement character"
	case unicode.Is(unicode.Co, r):
		return "the private-use character"
	case unicode.IsSpace(r) || unicode.In(r, unicode.Zs, unicode.Zl, unicode.Zp):
		return "the whitespace character"
	case !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S):
		return "the unassigned character"
	}
	return ""
}

// checkText refuses control characters other than tab and line breaks in
// free text that is stored and shown (descriptions): NUL cannot be stored
// by PostgreSQL, and the others rewrite what a terminal shows.
func checkText(field, s string) error {
	for i, r := range s {
		if unicode.Is(unicode.Cc, r) && r != '\t' && r != '\n' && r != '\r' {
			return invalidField(field, "%s contains the control character U+%04X at byte %d", field, r, i)
		}
	}
	return nil
}
