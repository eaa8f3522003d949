package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/placement"
)

// contextResidency is context placement: loaded skills render into a
// <current_context> section of every request, outside the transcript and
// its cap; at most MaxLoaded are loaded, the least recently used making
// way, and each load and unload is recorded in the transcript by a
// contextChanged entry (the activation's result), which nothing pins.
type contextResidency struct {
	r   *run
	set placement.Loaded
}

var _ residency = (*contextResidency)(nil)

func (c *contextResidency) activateDescription() string {
	return fmt.Sprintf("Load a skill into the current context (its instructions, files and tools); at most %d are loaded at once, and loading one more unloads the least recently used. Activating a loaded skill makes it the active one.", c.r.cfg.MaxLoaded)
}

func (c *contextResidency) catalogIntro() string {
	return fmt.Sprintf(catalogIntroContext, c.r.cfg.MaxLoaded)
}

// again makes a loaded skill the active one again, without a second copy.
func (c *contextResidency) again(ctx context.Context, a *activation) string {
	c.set.Load(a.name, a.tokens)
	c.r.emit(ctx, ContextChanged{Loaded: []string{}, Unloaded: []string{}, Active: a.name, Skills: c.set.Names()})
	return fmt.Sprintf("[context changed] Skill '%s' is already loaded; it is now the active skill. Loaded now: %s.", a.name, strings.Join(c.set.Names(), ", "))
}

// admit loads the skill, unloading the least recently used to make room;
// only a skill larger than the whole budget is refused.
func (c *contextResidency) admit(a *activation) ([]string, string) {
	unloaded, err := c.set.Load(a.name, a.tokens)
	if err != nil {
		return nil, fmt.Sprintf("it needs %d tokens, more than the %d-token budget of all loaded skills together", a.tokens, c.set.Budget)
	}
	names := make([]string, len(unloaded))
	for i, u := range unloaded {
		names[i] = u.Name
	}
	return names, ""
}

// activated drops the skills that made way, then records the load.
func (c *contextResidency) activated(ctx context.Context, a *activation, unloaded []string) string {
	for _, name := range unloaded {
		c.unload(ctx, name, "least recently used")
	}
	return c.contextChanged(ctx, a, unloaded)
}

// protect keeps nothing: a contextChanged entry is a trace, and the skill
// itself is in <current_context> while it is loaded.
func (c *contextResidency) protect(model.ToolCall) string { return "" }

func (c *contextResidency) pins() bool { return false }

func (c *contextResidency) order() []string { return c.set.Names() }

func (c *contextResidency) loaded() []placement.Item { return c.set.Items() }

// unload drops a skill from the context: its entries, its tools (a later
// call is an unknown tool), its per-load state and its pre-approvals. Its
// store values stay; its calls and results stay in the transcript.
func (c *contextResidency) unload(ctx context.Context, name, reason string) {
	delete(c.r.active, name)
	c.r.toolsChanged()
	c.r.emit(ctx, SkillUnloaded{Skill: name, Reason: reason})
}

// contextChanged records a load: the event, and the text of the
// activation's result, which carries the first TraceChars characters of
// each entry the skill rendered, so later turns keep a trace of it until
// the window drops the message.
func (c *contextResidency) contextChanged(ctx context.Context, a *activation, unloaded []string) string {
	c.r.emit(ctx, ContextChanged{Loaded: []string{a.name}, Unloaded: unloaded, Active: a.name, Skills: c.set.Names()})
	var b strings.Builder
	fmt.Fprintf(&b, "[context changed] Loaded skill '%s' (%d tokens) into the current context; it is the active skill.", a.name, a.tokens)
	if len(unloaded) > 0 {
		fmt.Fprintf(&b, " Unloaded: %s (least recently used; their instructions and tools are gone).", quoteAll(unloaded))
	}
	fmt.Fprintf(&b, " Loaded now: %s.", strings.Join(c.set.Names(), ", "))
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

// render renders the loaded skills, least recently used first and
// the active one last, and returns the section with its tokens. Go
// skills render again from their state; a render above its cap is cut
// (with a note), so the loaded skills never exceed their budget.
func (c *contextResidency) render() (string, int) {
	r := c.r
	if c.set.Active() == "" {
		return "", 0
	}
	entryLimit := int(r.cfg.EntryShare * float64(r.cfg.Window))
	var b strings.Builder
	fmt.Fprintf(&b, "<current_context>\nLoaded skills: %s; the active one is %s.\n\n", strings.Join(c.set.Names(), ", "), c.set.Active())
	for _, name := range c.set.Names() {
		a := r.active[name]
		if a.gs != nil {
			r.renderGoContent(a)
			if a.tokens > entryLimit {
				a.content = cutToTokens(a.content, entryLimit, r.count) + fmt.Sprintf("\n[%s's context was cut to its %d-token share]\n</skill_content>", name, entryLimit)
				a.tokens = r.count(a.content)
			}
			c.set.Resize(name, a.tokens)
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
