package agent

import (
	"github.com/skilld/skilld/agent/history"
	"github.com/skilld/skilld/agent/model"
)

// entry is one message of the run's view with what the runtime knows of
// it. Token counts are computed once per message, so building a request
// never re-tokenizes the transcript.
type entry struct {
	msg    model.Message
	tokens int
	// skill names the skill whose activation this tool result holds:
	// protected content in transcript placement.
	skill string
	// protected entries are kept verbatim by windowing and compaction.
	protected bool
	// summary marks a compaction's summary.
	summary bool
	// seq is the message's task log sequence number (0 for a summary,
	// which is not a log message), so a request can say which of the
	// log's messages it left out.
	seq int64
}

func messageTokens(c Counter, m model.Message) int {
	n := MessageOverhead + c.Count(m.Content)
	for _, tc := range m.ToolCalls {
		n += c.Count(tc.Name) + c.Count(string(tc.Arguments))
	}
	return n
}

// view is what requests are built from: the transcript as windowing and
// compaction left it. The task log keeps every message; the view drops
// what left the window and replaces what was summarized. Its groups are
// kept up to date as messages arrive, so planning a request costs what the
// view holds, never the whole log.
type view struct {
	entries []entry
	groups  []history.Group
	tokens  int
	// pin keeps the first message and protected groups in every request
	// (transcript placement), outside the message cap.
	pin bool
	// left is what windowing and compaction took out for good.
	left leftOut
}

func (v *view) add(e entry) {
	v.groups = history.Append(v.groups, len(v.entries), history.Msg{Role: e.msg.Role, Tokens: e.tokens, Protected: e.protected, Summary: e.summary})
	v.entries = append(v.entries, e)
	v.tokens += e.tokens
}

// pinned lists the groups windowing must keep.
func (v *view) pinned() []int {
	if !v.pin || len(v.groups) == 0 {
		return nil
	}
	out := []int{0}
	for i, g := range v.groups[1:] {
		if g.Protected {
			out = append(out, i+1)
		}
	}
	return out
}

// window applies a cap of limit messages: groups that leave the window
// leave the view for good (the window only moves forward). It reports how
// many messages left.
func (v *view) window(limit int) int {
	if limit <= 0 || len(v.entries) <= limit {
		return 0
	}
	keep := history.Window(v.groups, limit, v.pinned())
	if len(keep) == len(v.groups) {
		return 0
	}
	before := len(v.entries)
	v.rebuild(keep, nil, -1, false)
	return before - len(v.entries)
}

// rebuild replaces the view by the groups keep (ascending), with extra
// inserted before the group at position at of keep (-1: none). The
// messages of the other groups are recorded as left out, by compaction
// when compacted is set, else by windowing.
func (v *view) rebuild(keep []int, extra []entry, at int, compacted bool) {
	old := v.entries
	oldGroups := v.groups
	left := v.left
	*v = view{pin: v.pin}
	kept := make([]bool, len(oldGroups))
	for _, gi := range keep {
		kept[gi] = true
	}
	var dropped []*entry
	for gi := range oldGroups {
		if kept[gi] {
			dropped = append(dropped, nil)
			continue
		}
		g := oldGroups[gi]
		for i := g.From; i < g.To; i++ {
			dropped = append(dropped, &old[i])
		}
	}
	for k, gi := range keep {
		if k == at {
			for _, e := range extra {
				v.add(e)
			}
		}
		g := oldGroups[gi]
		for _, e := range old[g.From:g.To] {
			v.add(e)
		}
	}
	// The seqs of what stays, ascending: the view keeps the log's order.
	var seqs []int64
	for _, e := range v.entries {
		if e.seq != 0 {
			seqs = append(seqs, e.seq)
		}
	}
	v.left = left
	v.left.leave(dropped, seqs, compacted)
}

// messages returns the view's messages for a request.
func (v *view) messages() []model.Message {
	out := make([]model.Message, len(v.entries))
	for i, e := range v.entries {
		out[i] = e.msg
	}
	return out
}
