package history

// Plan is one compaction of a transcript's groups: Summarize is replaced
// by one summary message, placed after Head; Lifted, the protected groups
// that were among them, follow it verbatim and in order; Tail stays as it
// is. Every group is in exactly one of the four lists.
type Plan struct {
	Head      []int
	Summarize []int
	Lifted    []int
	Tail      []int
	// Tokens is what the summarized groups add up to.
	Tokens int
}

// Compaction plans which groups a compaction summarizes; when to compact
// (a request above 75% of the effective window) is the caller's rule. It
// keeps the first group and the newest groups holding at least keepLast
// messages, and summarizes what is between, except protected groups, which
// are lifted out of the span and kept verbatim, so an early activation
// never blocks compaction. ok is false when there is nothing worth
// summarizing (no unprotected group between, or only an earlier summary).
func Compaction(groups []Group, keepLast int) (p Plan, ok bool) {
	n := len(groups)
	if n < 3 {
		return Plan{}, false
	}
	t, count := n, 0
	for t > 1 && (count < keepLast || t == n) {
		t--
		count += groups[t].Len()
	}
	p.Head = []int{0}
	fresh := false
	for i := 1; i < t; i++ {
		g := groups[i]
		if g.Protected {
			p.Lifted = append(p.Lifted, i)
			continue
		}
		p.Summarize = append(p.Summarize, i)
		p.Tokens += g.Tokens
		fresh = fresh || !g.Summary
	}
	p.Tail = span(t, n)
	return p, fresh
}
