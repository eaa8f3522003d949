// Package doctest runs the shell walkthroughs of the project's Markdown
// documents, so that what the README tells a newcomer to type is what the
// test suite types. A document's ```sh blocks run in order in one bash
// session (variables and background jobs carry from block to block); a
// block is left out only when the line before it says why:
//
//	<!-- doctest: skip needs an OpenAI API key -->
//
// ```json blocks must parse. Other blocks (console transcripts, toml) are
// shown, not run.
package doctest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Block is one fenced code block of a document.
type Block struct {
	// Line is the 1-based line of the opening fence.
	Line int
	// Lang is the fence's info string ("sh", "json", "console", …).
	Lang string
	// Body is the block's text, ending in a newline.
	Body string
	// Skip is the reason given to leave the block out ("" to run it).
	Skip string
}

const skipMarker = "<!-- doctest: skip"

// Parse returns the fenced code blocks of a Markdown document in order.
// A skip marker without a reason, a marker not followed by a block, and an
// unclosed fence are errors: a walkthrough must not shrink silently.
func Parse(doc []byte) ([]Block, error) {
	var blocks []Block
	var cur *Block
	var body strings.Builder
	skip, skipLine := "", 0
	sc := bufio.NewScanner(bytes.NewReader(doc))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if cur != nil {
			if trimmed == "```" {
				cur.Body = body.String()
				blocks = append(blocks, *cur)
				cur = nil
				continue
			}
			body.WriteString(line)
			body.WriteByte('\n')
			continue
		}
		switch {
		case strings.HasPrefix(trimmed, skipMarker):
			reason := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(trimmed, skipMarker), "-->"))
			if reason == "" || !strings.HasSuffix(trimmed, "-->") {
				return nil, fmt.Errorf("line %d: a skip marker must say why: %s <reason> -->", n, skipMarker)
			}
			skip, skipLine = reason, n
		case strings.HasPrefix(trimmed, "```"):
			cur = &Block{Line: n, Lang: strings.TrimSpace(strings.TrimPrefix(trimmed, "```")), Skip: skip}
			body.Reset()
			skip = ""
		case trimmed != "" && skip != "":
			return nil, fmt.Errorf("line %d: the skip marker is not followed by a code block", skipLine)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if cur != nil {
		return nil, fmt.Errorf("line %d: the code block is never closed", cur.Line)
	}
	if skip != "" {
		return nil, fmt.Errorf("line %d: the skip marker is not followed by a code block", skipLine)
	}
	return blocks, nil
}

// Script joins the document's runnable sh blocks into one bash script that
// stops at the first failing command. Before each block it writes a marker
// line to stderr naming the block's place (name:line), so a failure can be
// traced to the block it happened in.
func Script(name string, blocks []Block) string {
	var b strings.Builder
	b.WriteString("set -eo pipefail\n")
	for _, bl := range blocks {
		if bl.Lang != "sh" || bl.Skip != "" {
			continue
		}
		fmt.Fprintf(&b, "echo '%s%s:%d' >&2\n%s", Marker, name, bl.Line, bl.Body)
	}
	return b.String()
}

// Marker starts the line Script writes before each block.
const Marker = "::doctest block "

// LastBlock returns the place of the last block that started, read from
// the stderr of a Script run.
func LastBlock(stderr string) string {
	i := strings.LastIndex(stderr, Marker)
	if i < 0 {
		return ""
	}
	rest := stderr[i+len(Marker):]
	if j := strings.IndexByte(rest, '\n'); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// CheckJSON reports the first ```json block that does not parse.
func CheckJSON(name string, blocks []Block) error {
	for _, bl := range blocks {
		if bl.Lang != "json" || bl.Skip != "" {
			continue
		}
		var v any
		if err := json.Unmarshal([]byte(bl.Body), &v); err != nil {
			return fmt.Errorf("%s:%d: the JSON block does not parse: %w", name, bl.Line, err)
		}
	}
	return nil
}
