package lint

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/internal/units"
)

// MaxBodyTokens is the longest SKILL.md body that lint accepts. The body
// is loaded whole when the skill is activated; past this size it crowds
// the conversation, and in windows under ten times its size the runtime
// shows a summary instead (an activation may take 10% of the window).
const MaxBodyTokens = 5000

func checkBodyLong(s *skill) []Finding {
	n := s.opts.Count(s.parsed.Body)
	if n <= MaxBodyTokens {
		return nil
	}
	// The activation carries the whole file, frontmatter included.
	whole := s.opts.Count(s.text)
	below := int(float64(whole) / agent.DefaultEntryShare)
	return []Finding{{File: s.file, Line: s.bodyLine, Message: fmt.Sprintf(
		"body is %d tokens, over %d: in windows under about %s tokens an activation shows only its opening; move details into references/ files that SKILL.md links to",
		n, MaxBodyTokens, units.Window(roundUp(below, 1000)))}}
}

func roundUp(n, unit int) int { return (n + unit - 1) / unit * unit }

// claudeArguments is compiled on first use, not at start.
var claudeArguments = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$ARGUMENTS\b`) })

func checkClaudeArguments(s *skill) []Finding {
	var out []Finding
	s.bodyLines(func(n int, line string) {
		if claudeArguments().MatchString(line) {
			out = append(out, Finding{File: s.file, Line: n, Message: "$ARGUMENTS is replaced by the command's arguments in Claude Code only; other agents see it as written, so say in words what the arguments are"})
		}
	})
	return out
}

func checkClaudeCommand(s *skill) []Finding {
	var out []Finding
	s.bodyLines(func(n int, line string) {
		if strings.HasPrefix(strings.TrimSpace(line), "!`") {
			out = append(out, Finding{File: s.file, Line: n, Message: "!`command` is run before the skill loads in Claude Code only; other agents see the line as written, so tell the model to run the command instead"})
		}
	})
	return out
}
