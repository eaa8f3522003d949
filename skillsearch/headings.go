package skillsearch

import (
	"bufio"
	"bytes"
	"strings"
	"unicode/utf8"
)

// Limits of what Headings keeps of one SKILL.md: a snapshot carries them
// for every attached skill, so a file with thousands of headings must not
// make it large.
const (
	MaxHeadings     = 40
	MaxHeadingRunes = 120
)

// Headings returns the Markdown ATX headings ("## Usage") of a SKILL.md's
// body, in order: not its frontmatter, not lines in fenced code blocks
// (where "# comment" is a shell comment), each trimmed of its marks and
// cut to MaxHeadingRunes, at most MaxHeadings of them. Bytes that are not
// UTF-8 are replaced.
func Headings(md []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(md))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	fence := ""
	first, inFrontmatter := true, false
	for sc.Scan() && len(out) < MaxHeadings {
		line := strings.TrimRight(sc.Text(), "\r")
		if first {
			first = false
			if strings.TrimSpace(strings.TrimPrefix(line, "\uFEFF")) == "---" {
				inFrontmatter = true
				continue
			}
		}
		if inFrontmatter {
			if strings.TrimSpace(line) == "---" {
				inFrontmatter = false
			}
			continue
		}
		trimmed := strings.TrimLeft(line, " ")
		if len(line)-len(trimmed) > 3 {
			continue // indented code
		}
		if f := fenceOf(trimmed); f != "" {
			switch {
			case fence == "":
				fence = f
			case strings.HasPrefix(f, fence) && strings.TrimSpace(strings.TrimLeft(trimmed, f[:1])) == "":
				fence = ""
			}
			continue
		}
		if fence != "" {
			continue
		}
		if h, ok := heading(trimmed); ok {
			out = append(out, h)
		}
	}
	return out
}

// fenceOf returns the run of ``` or ~~~ (three or more) a line starts
// with, or "".
func fenceOf(line string) string {
	for _, c := range []byte{'`', '~'} {
		n := 0
		for n < len(line) && line[n] == c {
			n++
		}
		if n >= 3 {
			return line[:n]
		}
	}
	return ""
}

// heading reads an ATX heading: one to six #, then a space or the end.
func heading(line string) (string, bool) {
	n := 0
	for n < len(line) && line[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || (n < len(line) && line[n] != ' ' && line[n] != '\t') {
		return "", false
	}
	text := strings.TrimSpace(line[n:])
	// A closing sequence of # is no part of the text.
	if t := strings.TrimRight(text, "#"); t != text && (t == "" || strings.HasSuffix(t, " ") || strings.HasSuffix(t, "\t")) {
		text = strings.TrimSpace(t)
	}
	text = strings.ToValidUTF8(text, "\uFFFD")
	if text == "" {
		return "", false
	}
	if utf8.RuneCountInString(text) > MaxHeadingRunes {
		text = string([]rune(text)[:MaxHeadingRunes])
	}
	return text, true
}
