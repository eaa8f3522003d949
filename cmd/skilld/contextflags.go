package main

import (
	"flag"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
)

// contextFlags are an agent's context settings as flags (skilld run, and
// agents create/update).
type contextFlags struct {
	placement   string
	maxLoaded   int
	maxMessages int
	compaction  string
}

func (f *contextFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.placement, "placement", "", "where activated skills go: transcript (in the conversation, pinned; the default)\n"+
		"or context (a <current_context> section, at most --max-loaded at once, least recently used unloaded)")
	fs.IntVar(&f.maxLoaded, "max-loaded", 0, "context placement: skills loaded at once (default 3)")
	fs.IntVar(&f.maxMessages, "max-messages", 0, "messages of the conversation a request carries at most (windowing; default: 60 in context\n"+
		"placement, no cap in transcript placement; -1: no cap)")
	fs.StringVar(&f.compaction, "compaction", "", "on or off: summarize old messages when a request nears the window (default on)")
}

// check refuses values that cannot work.
func (f *contextFlags) check() error {
	switch {
	case f.placement != "" && f.placement != agent.PlacementTranscript && f.placement != agent.PlacementContext:
		return skilld.Errorf(skilld.EINVALID, "--placement %q: use transcript or context", f.placement)
	case f.compaction != "" && f.compaction != "on" && f.compaction != "off":
		return skilld.Errorf(skilld.EINVALID, "--compaction %q: use on or off", f.compaction)
	case f.maxLoaded < 0:
		return skilld.Errorf(skilld.EINVALID, "--max-loaded %d: give a positive number", f.maxLoaded)
	case f.maxMessages < -1 || f.maxMessages == 1:
		return skilld.Errorf(skilld.EINVALID, "--max-messages %d: give at least 2, or -1 for no cap", f.maxMessages)
	}
	return nil
}

// apply writes the flags that were given into settings.
func (f *contextFlags) apply(set func(string) bool, cs *skilld.ContextSettings) {
	if set("placement") {
		cs.Placement = f.placement
	}
	if set("max-loaded") {
		cs.MaxLoaded = f.maxLoaded
	}
	if set("max-messages") {
		cs.MaxMessages = f.maxMessages
	}
	if set("compaction") {
		on := f.compaction == "on"
		cs.Compaction = &on
	}
}

// given reports which of fs's flags were set.
func given(fs *flag.FlagSet) func(string) bool {
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	return func(name string) bool { return set[name] }
}
