package scan

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// excerptWidth bounds an excerpt, in runes written (an escape counts
// its length).
const excerptWidth = 120

// excerpt returns the part of line around bytes [start, end), at most
// about excerptWidth runes, with every character a reader could not see
// written as <U+XXXX> and "…" where it was cut.
func excerpt(line []byte, start, end int) string {
	const context = 40
	from, to := start, end
	for n := 0; from > 0 && n < context; n++ {
		_, size := utf8.DecodeLastRune(line[:from])
		from -= size
	}
	for n := 0; to < len(line) && n < context; n++ {
		_, size := utf8.DecodeRune(line[to:])
		to += size
	}
	var b strings.Builder
	if from > 0 {
		b.WriteString("…")
	}
	for i, n := from, 0; i < to && n < excerptWidth; {
		r, size := utf8.DecodeRune(line[i:])
		i += size
		n += writeVisible(&b, r, size)
		if i >= to && to < len(line) {
			b.WriteString("…")
		}
	}
	return strings.TrimSpace(b.String())
}

// writeVisible writes r, or <U+XXXX> for a character that would not show
// (format, control and private-use characters, invalid bytes), and
// returns how many runes it wrote.
func writeVisible(b *strings.Builder, r rune, size int) int {
	switch {
	case r == utf8.RuneError && size == 1:
		b.WriteString("<invalid>")
		return len("<invalid>")
	case r == '\t':
		b.WriteByte(' ')
		return 1
	case hidden(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Co, r):
		n, _ := fmt.Fprintf(b, "<U+%04X>", r)
		return n
	}
	b.WriteRune(r)
	return 1
}
