package agent

import (
	"github.com/skilld/skilld/agent/model"
)

// entry is one transcript message with what the runtime knows about it.
// Token counts are computed once per message, so building a request never
// re-tokenizes the transcript.
type entry struct {
	msg    model.Message
	tokens int
	// skill names the skill whose activation this tool result holds:
	// protected content that compaction must keep verbatim.
	skill string
}

func messageTokens(c Counter, m model.Message) int {
	n := MessageOverhead + c.Count(m.Content)
	for _, tc := range m.ToolCalls {
		n += c.Count(tc.Name) + c.Count(string(tc.Arguments))
	}
	return n
}
