package callview

import (
	"fmt"
	"strings"
)

// Result is a call's result as a person reads it.
type Result struct {
	// Output is the text the model read, without the "[exit status N]"
	// line a shell result ends with when Exit says it already. Lines the
	// sandbox adds otherwise ("[output cut at …]", "[stopped: …]") stay.
	Output string
	// Exit is the exit status of the command the call ran (nil: none ran).
	Exit *int
	// IsError marks a tool error: the call could not do what it was asked.
	IsError bool
}

// NewResult is a result from its tool message's content and its
// tool.result event's is_error and exit_code.
func NewResult(content string, isError bool, exit *int) Result {
	r := Result{Output: content, Exit: exit, IsError: isError}
	if exit != nil {
		status := fmt.Sprintf("[exit status %d]", *exit)
		if rest, ok := strings.CutSuffix(content, status); ok {
			r.Output = strings.TrimSuffix(rest, "\n")
		}
	}
	return r
}

// Failed reports whether the call failed: a tool error, or a command that
// exited with a status other than 0.
func (r Result) Failed() bool {
	return r.IsError || (r.Exit != nil && *r.Exit != 0)
}

// Status is "exit N" for a call that ran a command, "error" for a tool
// error, and "" otherwise.
func (r Result) Status() string {
	switch {
	case r.Exit != nil:
		return fmt.Sprintf("exit %d", *r.Exit)
	case r.IsError:
		return "error"
	}
	return ""
}

// Lines splits output into lines, without the last one's newline; no
// output has no lines.
func Lines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// Head is the first n lines and how many more there are.
func Head(lines []string, n int) (shown []string, more int) {
	if len(lines) <= n {
		return lines, 0
	}
	return lines[:n], len(lines) - n
}

// Tail is the last n lines and how many come before them.
func Tail(lines []string, n int) (shown []string, earlier int) {
	if len(lines) <= n {
		return lines, 0
	}
	return lines[len(lines)-n:], len(lines) - n
}
