package agent

import (
	"fmt"
	"strings"
)

// summaryOpenings are how much of an oversized SKILL.md its summary
// quotes, tried in turn until the summary fits its cap.
var summaryOpenings = []int{1500, 800, 400, 150, 0}

// summaryFileLists are how many file names a summary lists, tried in turn.
var summaryFileLists = []int{-1, 50, 12, 0}

// EntryFormat says how an activation entry points at a skill's files: the
// words are a run's (files in the sandbox) or another surface's (the MCP
// server's read_skill_file).
type EntryFormat struct {
	// Header is the line before the file list.
	Header string
	// More says where to see the files a shortened list leaves out.
	More string
	// Where says how to read the whole SKILL.md when only its opening is
	// shown ("at skills/x/SKILL.md"); it is asked for only then.
	Where func() (string, error)
}

// FitEntry renders a skill's activation entry within limit tokens: the
// whole SKILL.md in <skill_content> with its file list, else the largest
// summary (its size, its opening, where the rest is, fewer files) that
// fits. tokens is the size of what it returns; ok is false, with the size
// of the shortest summary, when not even that fits.
func FitEntry(name, md string, files []string, f EntryFormat, limit int, count func(string) int) (content string, tokens int, summarized, ok bool, err error) {
	content = fmt.Sprintf("<skill_content name=%q>\n%s\n\n%s</skill_content>", name, strings.TrimSpace(md), f.list(files, -1))
	if tokens = count(content); tokens <= limit {
		return content, tokens, false, true, nil
	}
	where, err := f.Where()
	if err != nil {
		return "", 0, false, false, err
	}
	mdTokens := count(md)
	for _, listed := range summaryFileLists {
		for _, opening := range summaryOpenings {
			open := []rune(md)
			if len(open) > opening {
				open = append(open[:opening], []rune(" …")...)
			}
			content = fmt.Sprintf("<skill_content name=%q>\nThis skill's SKILL.md is %d tokens, more than the %d allowed for one skill, so only its opening is shown. Read the whole file %s before following it.\n\n%s\n\n%s</skill_content>",
				name, mdTokens, limit, where, string(open), f.list(files, listed))
			if tokens = count(content); tokens <= limit {
				return content, tokens, true, true, nil
			}
		}
	}
	return content, tokens, true, false, nil
}

// list lists at most listed files (-1: all).
func (f EntryFormat) list(files []string, listed int) string {
	var b strings.Builder
	b.WriteString(f.Header)
	b.WriteString("\n")
	shown := files
	if listed >= 0 && len(files) > listed {
		shown = files[:listed]
	}
	for _, name := range shown {
		fmt.Fprintf(&b, "- %s\n", name)
	}
	if len(shown) < len(files) {
		fmt.Fprintf(&b, "- … and %d more (%s)\n", len(files)-len(shown), f.More)
	}
	return b.String()
}
