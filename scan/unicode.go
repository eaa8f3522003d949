package scan

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
)

// Character classes of the hidden-text checks.
func isTag(r rune) bool { return r >= 0xE0000 && r <= 0xE007F }

// isBidi: the embeddings, overrides and isolates of Unicode's
// bidirectional algorithm (UAX #9), the "Trojan Source" characters. The
// marks (U+200E, U+200F, U+061C) are left alone: they only nudge neutral
// characters and right-to-left text uses them legitimately.
func isBidi(r rune) bool { return r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069 }

func isZeroWidth(r rune) bool {
	switch r {
	case 0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0x180E, 0x2061, 0x2062, 0x2063, 0x2064, 0x115F, 0x1160, 0x3164, 0xFFA0:
		return true
	}
	return false
}

func hidden(r rune) bool { return isTag(r) || isBidi(r) || isZeroWidth(r) }

// charCheck returns a check reporting each line of a text file holding a
// character bad says is one, unless allowed (when given) says that
// occurrence is legitimate. The message says which characters and, for
// tag characters, what text they spell.
func charCheck(bad func(rune) bool, allowed func(line []byte, i int, r rune) bool, describe func([]rune) string) check {
	return func(_ *unit, f pack.File, text bool) []skilld.Finding {
		if !text || isASCII(f.Data) {
			return nil
		}
		var out []skilld.Finding
		for n, line := range lines(f.Data) {
			if isASCII(line) {
				continue
			}
			var found []rune
			first := -1
			for i := 0; i < len(line); {
				r, size := utf8.DecodeRune(line[i:])
				if bad(r) && !(n == 1 && i == 0 && r == 0xFEFF) && (allowed == nil || !allowed(line, i, r)) {
					if first < 0 {
						first = i
					}
					found = append(found, r)
				}
				i += size
			}
			if first >= 0 {
				out = append(out, skilld.Finding{Line: n, Message: describe(found), Excerpt: excerpt(line, first, first+utf8.RuneLen(found[0]))})
			}
		}
		return out
	}
}

// describeTags decodes what tag characters spell (each is an ASCII
// character plus U+E0000).
func describeTags(rs []rune) string {
	var b strings.Builder
	for _, r := range rs {
		if c := r - 0xE0000; c >= 0x20 && c < 0x7F {
			b.WriteRune(c)
		}
	}
	msg := fmt.Sprintf("%d invisible Unicode tag characters", len(rs))
	if b.Len() > 0 {
		s := b.String()
		if len(s) > 200 {
			s = s[:200] + "…"
		}
		msg += fmt.Sprintf(" spell out hidden text: %q", s)
	}
	return msg
}

func describeList(what string) func([]rune) string {
	return func(rs []rune) string {
		var names []string
		seen := map[rune]bool{}
		for _, r := range rs {
			if !seen[r] {
				seen[r] = true
				names = append(names, fmt.Sprintf("U+%04X", r))
			}
		}
		return fmt.Sprintf("%s on this line: %s", what, strings.Join(names, ", "))
	}
}

// joinerAllowed lets zero-width joiners and non-joiners stand where text
// needs them: inside emoji sequences (👩‍💻) and between letters of the
// scripts that shape with them (Arabic, Persian, the Indic scripts), that
// is wherever a neighbour is outside ASCII. A joiner between plain ASCII
// letters, or at a line's edge, has no job to do.
func joinerAllowed(line []byte, i int, r rune) bool {
	if r != 0x200C && r != 0x200D {
		return false
	}
	before, _ := utf8.DecodeLastRune(line[:i])
	after, _ := utf8.DecodeRune(line[i+utf8.RuneLen(r):])
	return shapes(before) || shapes(after)
}

// shapes reports a character next to which a joiner is legitimate: a
// letter or mark outside Latin, or an emoji-range symbol.
func shapes(r rune) bool {
	if r == utf8.RuneError || r < 0x80 {
		return false
	}
	return (unicode.IsLetter(r) || unicode.IsMark(r)) && !unicode.Is(unicode.Latin, r) ||
		unicode.Is(unicode.So, r) || r >= 0x1F000 && r <= 0x1FAFF || r == 0xFE0F || r >= 0x1F3FB && r <= 0x1F3FF
}

// isASCII reports text every hidden character is absent from.
func isASCII(data []byte) bool {
	for _, c := range data {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
