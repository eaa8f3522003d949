package history

// Window chooses the groups a request carries when it may hold at most
// limit messages (the cap context placement puts on a request's
// conversation, 60 by default): the newest groups that fit, the oldest
// leaving first, then moved forward to start at a user message so that no
// tool result loses its call. Nothing is summarized.
//
// When the newest groups that fit hold no user message (one long run of
// tool calls), the window is the user message that began that turn
// followed by the newest groups that fit in the limit−1 messages left: still
// starting at a user message, and never above the limit. The one exception: the
// newest group is always carried whole, even when it alone is larger than
// what is left (an assistant message with many tool calls), because a
// group is never split.
//
// pinned are groups carried whatever the cap (ascending indices; the
// first message and protected activations in transcript placement); they
// do not count against limit. limit ≤ 0 means no cap. The result holds group
// indices, ascending. Its cost is that of the window and the pinned
// groups, not of the whole transcript.
func Window(groups []Group, limit int, pinned []int) []int {
	n := len(groups)
	if n == 0 {
		return nil
	}
	if limit <= 0 {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	s := fit(groups, n, limit)
	start := -1
	for i := s; i < n; i++ {
		if groups[i].User {
			start = i
			break
		}
	}
	var window []int
	switch {
	case start >= 0:
		window = span(start, n)
	default:
		// No user message among the newest groups: the turn's own user
		// message, then what fits after it.
		b := -1
		for i := s - 1; i >= 0; i-- {
			if groups[i].User {
				b = i
				break
			}
		}
		if b < 0 {
			window = span(s, n)
			break
		}
		s2 := fit(groups, n, limit-groups[b].Len())
		window = append([]int{b}, span(max(s2, b+1), n)...)
	}
	return merge(pinned, window)
}

// fit returns the first of the newest groups whose messages add up to at
// most limit; the newest group always fits.
func fit(groups []Group, n, limit int) int {
	s, count := n-1, groups[n-1].Len()
	for s > 0 && count+groups[s-1].Len() <= limit {
		s--
		count += groups[s].Len()
	}
	return s
}

func span(from, to int) []int {
	out := make([]int, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// merge unions two ascending index lists.
func merge(a, b []int) []int {
	out := make([]int, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || i < len(a) && a[i] < b[j]:
			out = append(out, a[i])
			i++
		case i == len(a) || b[j] < a[i]:
			out = append(out, b[j])
			j++
		default:
			out = append(out, a[i])
			i, j = i+1, j+1
		}
	}
	return out
}
