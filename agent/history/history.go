// Package history plans what part of a task's transcript a model request
// carries: windowing (at most N messages, starting at a user message) and
// compaction (the oldest unprotected messages replaced by one summary).
// It is pure: functions over message descriptions, with no model, no run
// and no I/O, so every rule is testable on its own.
//
// Messages are handled in groups, never split: a user message; an
// assistant message with the results of all the tool calls it made. So a
// tool result never appears without its call, nor a call without its
// results, whatever is left out.
package history

import "github.com/skilld/skilld/agent/model"

// Msg is what planning needs to know of one message.
type Msg struct {
	Role model.Role
	// Tokens is the message's size as the request will count it.
	Tokens int
	// Protected marks content that must be kept verbatim: an activation's
	// result in transcript placement (its group is protected with it).
	Protected bool
	// Summary marks a summary an earlier compaction made.
	Summary bool
}

// Span is the messages [From, To).
type Span struct{ From, To int }

// Len is the number of messages in s.
func (s Span) Len() int { return s.To - s.From }

// Group is a span of messages that stay together.
type Group struct {
	Span
	// User is set for a group that is a user message.
	User bool
	// Protected is set when a message of the group is protected.
	Protected bool
	// Summary is set for an earlier compaction's summary.
	Summary bool
	Tokens  int
}

// Groups splits msgs into groups. A tool message joins the group before
// it; any other message starts a group.
func Groups(msgs []Msg) []Group {
	var out []Group
	for i, m := range msgs {
		out = Append(out, i, m)
	}
	return out
}

// Append adds message i to groups, as Groups would, so a run can keep its
// groups up to date one message at a time.
func Append(groups []Group, i int, m Msg) []Group {
	if m.Role == model.RoleTool && len(groups) > 0 && !groups[len(groups)-1].User {
		g := &groups[len(groups)-1]
		g.To = i + 1
		g.Tokens += m.Tokens
		g.Protected = g.Protected || m.Protected
		return groups
	}
	return append(groups, Group{Span: Span{i, i + 1}, User: m.Role == model.RoleUser, Protected: m.Protected, Summary: m.Summary, Tokens: m.Tokens})
}

// Messages counts the messages of groups.
func Messages(groups []Group) int {
	n := 0
	for _, g := range groups {
		n += g.Len()
	}
	return n
}

// Tokens adds up the tokens of groups.
func Tokens(groups []Group) int {
	n := 0
	for _, g := range groups {
		n += g.Tokens
	}
	return n
}
