package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/skilld/skilld/agent/placement"
)

// Context placement: loaded skills render into a
// <current_context> section of every request, outside the transcript and
// its cap; each load and unload is recorded in the transcript by a
// contextChanged entry (the activation's result).

// reactivate makes a loaded skill the active one again, without a second
// copy.
func (r *run) reactivate(ctx context.Context, a *activation) string {
	r.loaded.Load(a.name, a.tokens)
	r.emit(ctx, ContextChanged{Loaded: []string{}, Unloaded: []string{}, Active: a.name, Skills: r.loaded.Names()})
	return fmt.Sprintf("[context changed] Skill '%s' is already loaded; it is now the active skill. Loaded now: %s.", a.name, strings.Join(r.loaded.Names(), ", "))
}

// unload drops a skill from the context: its entries, its tools (a later
// call is an unknown tool), its per-load state and its pre-approvals. Its
// store values stay; its calls and results stay in the transcript.
func (r *run) unload(ctx context.Context, name, reason string) {
	delete(r.active, name)
	r.toolsChanged()
	r.emit(ctx, SkillUnloaded{Skill: name, Reason: reason})
}

// contextChanged records a load: the event, and the text of the
// activation's result, which carries the first TraceChars characters of
// each entry the skill rendered, so later turns keep a trace of it until
// the window drops the message.
func (r *run) contextChanged(ctx context.Context, a *activation, unloaded []placement.Item) string {
	names := make([]string, len(unloaded))
	for i, u := range unloaded {
		names[i] = u.Name
	}
	r.emit(ctx, ContextChanged{Loaded: []string{a.name}, Unloaded: names, Active: a.name, Skills: r.loaded.Names()})
	var b strings.Builder
	fmt.Fprintf(&b, "[context changed] Loaded skill '%s' (%d tokens) into the current context; it is the active skill.", a.name, a.tokens)
	if len(names) > 0 {
		fmt.Fprintf(&b, " Unloaded: %s (least recently used; their instructions and tools are gone).", quoteAll(names))
	}
	fmt.Fprintf(&b, " Loaded now: %s.", strings.Join(r.loaded.Names(), ", "))
	if len(a.entries) > 0 {
		fmt.Fprintf(&b, "\nWhat %s shows in the context begins:", a.name)
		for _, e := range a.entries {
			fmt.Fprintf(&b, "\n- %s", trace(e))
		}
	}
	return b.String()
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "'" + n + "'"
	}
	return strings.Join(q, ", ")
}

// trace is the first TraceChars characters of an entry, on one line.
func trace(e string) string {
	e = strings.Join(strings.Fields(e), " ")
	if r := []rune(e); len(r) > TraceChars {
		return string(r[:TraceChars]) + "…"
	}
	return e
}

// currentContext renders the loaded skills, least recently used first and
// the active one last, and returns the section with its tokens. Go
// skills render again from their state; a render above its cap is cut
// (with a note), so the loaded skills never exceed their budget.
func (r *run) currentContext() (string, int) {
	if r.loaded == nil || len(r.loaded.Items()) == 0 {
		return "", 0
	}
	entryLimit := int(r.cfg.EntryShare * float64(r.cfg.Window))
	var b strings.Builder
	fmt.Fprintf(&b, "<current_context>\nLoaded skills: %s; the active one is %s.\n\n", strings.Join(r.loaded.Names(), ", "), r.loaded.Active())
	for _, name := range r.loaded.Names() {
		a := r.active[name]
		if a.gs != nil {
			r.renderGoContent(a)
			if a.tokens > entryLimit {
				a.content = cutToTokens(a.content, entryLimit, r.count) + fmt.Sprintf("\n[%s's context was cut to its %d-token share]\n</skill_content>", name, entryLimit)
				a.tokens = r.count(a.content)
			}
			r.loaded.Resize(name, a.tokens)
		}
		b.WriteString(a.content)
		b.WriteString("\n")
	}
	b.WriteString("</current_context>")
	text := b.String()
	return text, r.count(text)
}

// cutToTokens shortens s (by characters, from the end) until it counts at
// most limit tokens less a margin for the note that follows.
func cutToTokens(s string, limit int, count func(string) int) string {
	runes := []rune(s)
	for n := len(runes); n > 0; n = n * 3 / 4 {
		if count(string(runes[:n])) <= limit-40 {
			return string(runes[:n])
		}
	}
	return ""
}
