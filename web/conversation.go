package web

import (
	"fmt"
	"html/template"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/callview"
	"github.com/skilld/skilld/agent/model"
)

// What the conversation shows at most, to keep the task page within its
// size budget however long the run: the latest turns up to a budget of
// text, each tool output up to its first lines (the last ones when the
// call failed, where a traceback ends), each line and message cut.
const (
	conversationBudget = 40_000
	outputLines        = 40
	outputLineWidth    = 300
	messageChars       = 8_000
)

// turn is one item of the conversation: a message, a tool call with its
// result, or a notice (a task's end, a skill unloaded, a compaction).
type turn struct {
	Seq  int64
	Kind string // user, assistant, call, notice
	Text string
	// HTML is an assistant message rendered from Markdown.
	HTML template.HTML
	// Request is the seq of the model request this answer replied to, when
	// its card is on the page.
	Request int64
	Call    *callTurn
	Failed  bool
	size    int
}

// callTurn is a tool call as a person reads it, with what became of it.
type callTurn struct {
	// ID names the call's output element, stable as the page refreshes:
	// the assistant message's seq and the call's place in it.
	ID, CallID, Tool string
	Command, Args    string
	// Skill is set for an activation that loaded its skill; SkillInfo
	// says its size and placement.
	Skill, SkillInfo string
	Notes            []note
	Done             bool
	// Missing says why a call has no result yet: it runs, or the task
	// ended first.
	Missing string
	// What the log says of the result, rendered by render: its text, and
	// its tool.result's fields.
	content   string
	isError   bool
	exit      *int
	errorCode string
	// The result as shown: its status ("exit 1", "failed: …"), its
	// output and how many lines it has, which of them are shown when not
	// all are.
	Status, Output, Lines, CutNote string
	Failed                         bool
}

type note struct {
	Text string
	Bad  bool
}

// conversation builds the conversation from a task's events, in order.
// markdown renders an assistant's message.
type conversation struct {
	turns    []*turn
	calls    map[string]*callTurn
	current  *callTurn // the call running now: events between its tool.call and its result are about it
	request  int64     // the latest model request's seq
	ended    bool
	failures int
	markdown func(string) template.HTML
}

func newConversation(markdown func(string) template.HTML) *conversation {
	return &conversation{calls: map[string]*callTurn{}, markdown: markdown}
}

// add takes the next event of the task.
func (c *conversation) add(ev agent.Event) {
	switch p := ev.Payload.(type) {
	case agent.Message:
		c.message(ev.Seq, p)
	case agent.LLMCallStarted:
		c.request = ev.Seq
	case agent.ToolCall:
		c.current = c.calls[p.CallID]
	case agent.ToolResult:
		c.result(p)
	case agent.ToolOffloaded:
		c.noteOn(p.CallID, note{Text: "the whole output is kept as " + p.OutputID + " (read_tool_output)"})
	case agent.ToolDenied:
		c.noteOn(p.CallID, note{Text: "denied: " + p.Reason, Bad: true})
	case agent.ApprovalRequested:
		c.noteOn(p.CallID, note{Text: "waits for approval: " + p.Reason})
	case agent.ApprovalDecided:
		verdict := note{Text: "approved"}
		if !p.Approved {
			verdict = note{Text: "refused", Bad: true}
		}
		c.noteOn(p.CallID, verdict)
	case agent.ToolPreapproved:
		c.noteOn(p.CallID, note{Text: fmt.Sprintf("approved by skill %s (allowed-tools %s)", p.Skill, p.Allowed)})
	case agent.SkillActivated:
		info := fmt.Sprintf("%d tokens, %s placement", p.Tokens, p.Placement)
		if p.Summarized {
			info += ", summarized"
		}
		if k := c.current; k != nil && k.Tool == agent.ActivateSkill {
			k.Skill, k.SkillInfo = p.Skill, info
			return
		}
		c.notice(ev.Seq, fmt.Sprintf("Skill %s activated (%s)", p.Skill, info), false)
	case agent.SkillRefused:
		c.noteOrNotice(ev.Seq, fmt.Sprintf("skill %s refused: %s", p.Skill, p.Reason), true)
	case agent.SkillMaterialized:
		if p.Error != "" {
			c.noteOrNotice(ev.Seq, fmt.Sprintf("skill %s: files not placed: %s", p.Skill, p.Error), true)
		}
	case agent.SkillUnloaded:
		c.notice(ev.Seq, fmt.Sprintf("Skill %s unloaded: %s", p.Skill, p.Reason), false)
	case agent.ContextCompacted:
		c.notice(ev.Seq, fmt.Sprintf("%d older messages summarized to fit the window (%d tokens saved)", p.Messages, p.Saved), false)
	case agent.TaskCompleted:
		c.ended = true
		text := "Task completed"
		switch c.failures {
		case 0:
		case 1:
			text += ", but 1 tool call failed"
		default:
			text += fmt.Sprintf(", but %d tool calls failed", c.failures)
		}
		c.notice(ev.Seq, text, false)
	case agent.TaskFailed:
		c.ended = true
		c.notice(ev.Seq, "Task failed: "+p.Error, true)
	}
}

func (c *conversation) message(seq int64, m agent.Message) {
	switch m.Role {
	case model.RoleUser:
		c.push(&turn{Seq: seq, Kind: "user", Text: cut(m.Content, messageChars)})
	case model.RoleAssistant:
		if m.Content != "" {
			text := cut(m.Content, messageChars)
			c.push(&turn{Seq: seq, Kind: "assistant", Text: text, HTML: c.markdown(text), Request: c.request})
		}
		for i, tc := range m.ToolCalls {
			a := callview.ParseArgs(tc.Name, tc.Arguments)
			k := &callTurn{ID: fmt.Sprintf("call-%d-%d", seq, i), CallID: tc.ID, Tool: tc.Name, Command: a.Command}
			if a.Command != "" {
				if len(a.Pairs) > 0 {
					k.Args = callview.Args{Pairs: a.Pairs}.String()
				}
			} else {
				k.Args = a.String()
			}
			k.Command, k.Args = cut(k.Command, messageChars), cut(k.Args, messageChars)
			c.calls[tc.ID] = k
			tn := &turn{Seq: seq, Kind: "call", Call: k}
			if i == 0 && m.Content == "" {
				// No text to hang the request's link on: the first call
				// has it.
				tn.Request = c.request
			}
			c.push(tn)
		}
	case model.RoleTool:
		k := c.calls[m.ToolCallID]
		if k == nil {
			// A result whose call the page did not read (a long log is read
			// from its start, up to a bound).
			k = &callTurn{ID: fmt.Sprintf("call-%d", seq), CallID: m.ToolCallID, Tool: m.ToolName}
			c.calls[m.ToolCallID] = k
			c.push(&turn{Seq: seq, Kind: "call", Call: k})
		}
		k.Done = true
		if m.Skill != "" {
			k.Skill = m.Skill
			return
		}
		k.content, k.isError = m.Content, m.IsError
	}
}

// result completes a call with its tool.result: whether it failed, and
// its command's exit status. (Its message came just before.)
func (c *conversation) result(p agent.ToolResult) {
	c.current = nil
	k := c.calls[p.CallID]
	if k == nil {
		return
	}
	k.isError, k.exit, k.errorCode = p.IsError, p.ExitCode, p.ErrorCode
	if p.Failed() {
		c.failures++
	}
}

// render sets what a call shows of its result: its status, and its output
// cut to outputLines, the first ones or, when the call failed, the last.
func (k *callTurn) render(taskDone bool) {
	if !k.Done {
		k.Missing = "running…"
		if taskDone {
			k.Missing = "no result: the task ended first"
		}
		return
	}
	if k.Skill != "" {
		return
	}
	r := callview.NewResult(k.content, k.isError, k.exit)
	k.Status, k.Failed = r.Status(), r.Failed()
	if k.Failed {
		k.Status = "failed: " + k.Status
		if k.errorCode != "" {
			k.Status += " (" + k.errorCode + ")"
		}
	}
	lines := callview.Lines(r.Output)
	k.Lines = fmt.Sprintf("%d lines", len(lines))
	if len(lines) == 1 {
		k.Lines = "1 line"
	}
	shown, more := callview.Head(lines, outputLines)
	which := "first"
	if k.Failed {
		shown, more = callview.Tail(lines, outputLines)
		which = "last"
	}
	if more > 0 {
		k.CutNote = fmt.Sprintf("the %s %d shown; the task's events have all of it", which, len(shown))
	}
	out := make([]string, len(shown))
	for i, l := range shown {
		out[i] = cut(l, outputLineWidth)
	}
	k.Output = strings.Join(out, "\n")
}

func (c *conversation) noteOn(callID string, n note) {
	if k := c.calls[callID]; k != nil {
		k.Notes = append(k.Notes, n)
	}
}

// noteOrNotice notes text on the running call, or shows it on its own.
func (c *conversation) noteOrNotice(seq int64, text string, bad bool) {
	if c.current != nil {
		c.current.Notes = append(c.current.Notes, note{Text: text, Bad: bad})
		return
	}
	c.notice(seq, text, bad)
}

func (c *conversation) notice(seq int64, text string, bad bool) {
	c.push(&turn{Seq: seq, Kind: "notice", Text: text, Failed: bad})
}

func (c *conversation) push(t *turn) { c.turns = append(c.turns, t) }

// finish ends the conversation of a task in status: a task that ended
// without an end event (cancelled before it ran, or stopped) says how it
// ended. It returns the turns to show, the latest within the budget, and
// how many earlier ones are left out. shown says which model requests
// have a card on the page.
func (c *conversation) finish(t *skilld.Task, shown map[int64]bool) (turns []*turn, cut int) {
	if t.Status.Done() && !c.ended {
		text := "Task " + string(t.Status)
		if t.Error != nil {
			text += ": " + t.Error.Message
		}
		c.notice(t.LastSeq, text, t.Status != skilld.TaskCompleted)
	}
	size := 0
	start := len(c.turns)
	for start > 0 {
		tn := c.turns[start-1]
		// Sizes as the page holds them, escaped: text of quotes and
		// brackets grows up to five times.
		tn.size = escaped(tn.Text) + len(tn.HTML)
		if k := tn.Call; k != nil {
			k.render(t.Status.Done())
			tn.size += escaped(k.Command) + escaped(k.Args) + escaped(k.Output)
			tn.Failed = k.Failed
		}
		if size+tn.size > conversationBudget && start < len(c.turns) {
			break
		}
		size += tn.size
		start--
	}
	for _, tn := range c.turns[start:] {
		if !shown[tn.Request] {
			tn.Request = 0
		}
	}
	return c.turns[start:], start
}

func escaped(s string) int { return len(template.HTMLEscapeString(s)) }

// cut shortens s to n bytes at a character boundary, saying so.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "… [" + strconv.Itoa(len(s)-i) + " more bytes]"
}
