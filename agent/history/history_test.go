package history_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/skilld/skilld/agent/history"
	"github.com/skilld/skilld/agent/model"
)

// parse builds messages from a compact notation: u user, a assistant
// without calls, c assistant with calls, t tool result, p a protected tool
// result (an activation), s a summary (a user message). Each is 10 tokens.
func parse(s string) []history.Msg {
	var out []history.Msg
	for _, r := range strings.ReplaceAll(s, " ", "") {
		m := history.Msg{Tokens: 10}
		switch r {
		case 'u':
			m.Role = model.RoleUser
		case 's':
			m.Role, m.Summary = model.RoleUser, true
		case 'a', 'c':
			m.Role = model.RoleAssistant
		case 't':
			m.Role = model.RoleTool
		case 'p':
			m.Role, m.Protected = model.RoleTool, true
		}
		out = append(out, m)
	}
	return out
}

// show renders the chosen groups' messages in the notation again.
func show(notation string, groups []history.Group, idx []int) string {
	n := []rune(strings.ReplaceAll(notation, " ", ""))
	var b strings.Builder
	for k, i := range idx {
		if k > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(string(n[groups[i].From:groups[i].To]))
	}
	return b.String()
}

func TestGroups(t *testing.T) {
	g := history.Groups(parse("u ctt a u cp ctp"))
	if got := show("u ctt a u cp ctp", g, []int{0, 1, 2, 3, 4, 5}); got != "u ctt a u cp ctp" {
		t.Errorf("groups %q", got)
	}
	if !g[4].Protected || !g[5].Protected || g[1].Protected || !g[0].User || g[1].User || g[1].Tokens != 30 {
		t.Errorf("group flags %+v", g)
	}
	if history.Messages(g) != 11 || history.Tokens(g) != 110 {
		t.Errorf("counts %d %d", history.Messages(g), history.Tokens(g))
	}
}

func TestWindow(t *testing.T) {
	for _, tc := range []struct {
		msgs   string
		limit  int
		pinned []int
		want   string
	}{
		{"u a u a", 0, nil, "u a u a"},
		{"u a u a", 10, nil, "u a u a"},
		// the oldest leave first, and the window starts at a user message
		{"u a u ct a u a", 4, nil, "u a"},
		{"u a u ct a u a", 5, nil, "u a"},
		{"u a u ct a u a", 6, nil, "u ct a u a"},
		// a call never loses its results: ct counts as two
		{"u ctt u a", 3, nil, "u a"},
		// no user message among the newest that fit: the turn's own user
		// message, then what fits in the rest
		{"u ct ct ct ct", 4, nil, "u ct"},
		{"u ct ct ct ct", 5, nil, "u ct ct"},
		{"u a u ct ct ct ct", 3, nil, "u ct"},
		// the newest group is carried whole even when larger than the cap
		{"u ctttt", 2, nil, "u ctttt"},
		{"u a u ctttt", 3, nil, "u ctttt"},
		// pinned groups (first message, protected activations) come along,
		// outside the cap
		{"u cp a u ct a u a", 2, []int{0, 1}, "u cp u a"},
		{"u cp a u ct a u a", 2, []int{0, 1, 5}, "u cp a u a"},
	} {
		g := history.Groups(parse(tc.msgs))
		idx := history.Window(g, tc.limit, tc.pinned)
		if got := show(tc.msgs, g, idx); got != tc.want {
			t.Errorf("Window(%q, %d, %v) = %q, want %q", tc.msgs, tc.limit, tc.pinned, got, tc.want)
		}
		if !slices.IsSorted(idx) {
			t.Errorf("Window(%q) = %v: not ascending", tc.msgs, idx)
		}
	}
}

func TestCompaction(t *testing.T) {
	for _, tc := range []struct {
		msgs                  string
		head, sum, lift, tail string
		ok                    bool
	}{
		// first message and the newest 6 kept; the rest summarized
		{"u a u ct a u a u ct a", "u", "a u ct a", "", "u a u ct a", true},
		// an early activation is lifted out, not a blocker
		{"u cp a u ct ct a u a u ct a", "u", "a u ct ct a", "cp", "u a u ct a", true},
		// every group between is protected: nothing to summarize
		{"u cp cp u a u a u a", "u", "", "cp cp", "u a u a u a", false},
		// only an earlier summary between: nothing new to say
		{"u s u a u a u a", "u", "s", "", "u a u a u a", false},
		{"u s u ct u a u a u a", "u", "s u ct", "", "u a u a u a", true},
		// too short
		{"u a", "", "", "", "", false},
	} {
		g := history.Groups(parse(tc.msgs))
		p, ok := history.Compaction(g, 6)
		if ok != tc.ok {
			t.Errorf("Compaction(%q): ok %v, want %v", tc.msgs, ok, tc.ok)
		}
		if !tc.ok && tc.head == "" {
			continue
		}
		got := []string{show(tc.msgs, g, p.Head), show(tc.msgs, g, p.Summarize), show(tc.msgs, g, p.Lifted), show(tc.msgs, g, p.Tail)}
		want := []string{tc.head, tc.sum, tc.lift, tc.tail}
		if !slices.Equal(got, want) {
			t.Errorf("Compaction(%q) = %q, want %q", tc.msgs, got, want)
		}
		all := slices.Concat(p.Head, p.Summarize, p.Lifted, p.Tail)
		slices.Sort(all)
		if len(all) != len(g) || slices.Compact(all) == nil || len(slices.Compact(all)) != len(g) {
			t.Errorf("Compaction(%q): groups not each in exactly one list: %v", tc.msgs, p)
		}
	}
}
