package main

import (
	"flag"
	"fmt"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
)

// contextFlags are an agent's context settings (skilld.ContextSettings)
// as flags: the one definition `skilld run` and `skilld agents
// create/update` share, so both take every setting, spelled alike.
type contextFlags struct {
	window      int
	placement   string
	maxLoaded   int
	maxMessages int
	compaction  string
	entryShare  float64
	skillsShare float64
}

// contextFlagNames are the flags register defines, in the order of
// skilld.ContextSettings.
func contextFlagNames() []string {
	return []string{"context-window", "placement", "max-loaded", "max-messages", "entry-share", "skills-share", "compaction"}
}

func (f *contextFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&f.window, "context-window", 0, "the model's context window in tokens (needed unless the model is in the known table)")
	fs.StringVar(&f.placement, "placement", "", "where activated skills go: transcript (in the conversation, pinned; the default)\n"+
		"or context (a <current_context> section, at most --max-loaded at once, least recently used unloaded)")
	fs.IntVar(&f.maxLoaded, "max-loaded", 0, fmt.Sprintf("context placement: skills loaded at once (default %d)", agent.DefaultMaxLoaded))
	fs.IntVar(&f.maxMessages, "max-messages", 0, fmt.Sprintf("messages of the conversation a request carries at most (windowing; default: %d in context\n"+
		"placement, no cap in transcript placement; -1: no cap)", agent.DefaultMaxMessages))
	fs.Float64Var(&f.entryShare, "entry-share", 0, fmt.Sprintf("the share of the window one activated skill may take; a larger SKILL.md is summarized\n(default %.2f)", agent.DefaultEntryShare))
	fs.Float64Var(&f.skillsShare, "skills-share", 0, fmt.Sprintf("the share of the window all activated skills together may take (default %.2f)", agent.DefaultSkillsShare))
	fs.StringVar(&f.compaction, "compaction", "", "on or off: summarize old messages when a request nears the window (default on)")
}

// check refuses values that cannot work.
func (f *contextFlags) check() error {
	switch {
	case f.window < 0:
		return skilld.Errorf(skilld.EINVALID, "--context-window %d: give a positive number of tokens", f.window)
	case f.placement != "" && f.placement != agent.PlacementTranscript && f.placement != agent.PlacementContext:
		return skilld.Errorf(skilld.EINVALID, "--placement %q: use transcript or context", f.placement)
	case f.compaction != "" && f.compaction != "on" && f.compaction != "off":
		return skilld.Errorf(skilld.EINVALID, "--compaction %q: use on or off", f.compaction)
	case f.maxLoaded < 0:
		return skilld.Errorf(skilld.EINVALID, "--max-loaded %d: give a positive number", f.maxLoaded)
	case f.maxMessages < -1 || f.maxMessages == 1:
		return skilld.Errorf(skilld.EINVALID, "--max-messages %d: give at least 2, or -1 for no cap", f.maxMessages)
	case f.entryShare < 0 || f.entryShare > 1:
		return skilld.Errorf(skilld.EINVALID, "--entry-share %g: give a share of the window between 0 and 1, such as 0.1", f.entryShare)
	case f.skillsShare < 0 || f.skillsShare > 1:
		return skilld.Errorf(skilld.EINVALID, "--skills-share %g: give a share of the window between 0 and 1, such as 0.3", f.skillsShare)
	}
	return nil
}

// apply writes the flags that were given into settings.
func (f *contextFlags) apply(set func(string) bool, cs *skilld.ContextSettings) {
	if set("context-window") {
		cs.Window = f.window
	}
	if set("placement") {
		cs.Placement = f.placement
	}
	if set("max-loaded") {
		cs.MaxLoaded = f.maxLoaded
	}
	if set("max-messages") {
		cs.MaxMessages = f.maxMessages
	}
	if set("entry-share") {
		cs.EntryShare = f.entryShare
	}
	if set("skills-share") {
		cs.SkillsShare = f.skillsShare
	}
	if set("compaction") {
		on := f.compaction == "on"
		cs.Compaction = &on
	}
}

// patch is the merge patch (RFC 7396) of config.context that sets the
// flags given, and nothing else: the members are skilld.ContextSettings'.
func (f *contextFlags) patch(set func(string) bool) map[string]any {
	p := map[string]any{}
	for _, m := range []struct {
		flag, member string
		value        any
	}{
		{"context-window", "window", f.window}, {"placement", "placement", f.placement}, {"max-loaded", "max_loaded", f.maxLoaded},
		{"max-messages", "max_messages", f.maxMessages}, {"entry-share", "entry_share", f.entryShare},
		{"skills-share", "skills_share", f.skillsShare}, {"compaction", "compaction", f.compaction == "on"},
	} {
		if set(m.flag) {
			p[m.member] = m.value
		}
	}
	return p
}

// given reports which of fs's flags were set.
func given(fs *flag.FlagSet) func(string) bool {
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	return func(name string) bool { return set[name] }
}
