package agent

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"unicode/utf8"
)

// Catalog detail levels, from most to least: the catalog is shortened one
// level at a time until it fits its budget.
const (
	catalogFull      = iota // names, descriptions, file lists
	catalogNoFiles          // names and descriptions
	catalogShort            // descriptions cut to 200 characters
	catalogShorter          // descriptions cut to 60 characters
	catalogNamesOnly        // names only
	catalogSomeNames        // as many names as fit; search_skills finds the rest
)

var catalogLevelNames = [...]string{"full", "no file lists", "descriptions shortened to 200 characters", "descriptions shortened to 60 characters", "names only", "some names"}

// maxCatalogFiles caps the files listed per skill in the catalog.
const maxCatalogFiles = 12

// renderedCatalog is the catalog block as rendered, and what it lists.
type renderedCatalog struct {
	text          string
	level, tokens int
	// listed are the names listed, in the block's order; unlisted counts
	// the skills left out (level catalogSomeNames only).
	listed   []string
	unlisted int
}

// renderCatalog renders the catalog block of the disclosed skills at the
// most detailed level that fits budget tokens. It also lists each skill's
// files (which source systems left out, so models could not tell what a
// skill brings before activating it). When not even every name fits, it
// lists as many as fit (someNames), chosen with rotation, which is
// deterministic from the task's ID; searchable says whether search_skills
// will find the rest.
func renderCatalog(skills []Skill, intro string, budget int, count func(string) int, rotation string, searchable bool) renderedCatalog {
	c := renderedCatalog{}
	// Names only first: when even they do not fit (thousands of skills),
	// rendering and counting every more detailed level would take longer
	// than the whole rest of the task's start.
	if namesOver(skills, intro, budget, count) {
		return someNames(skills, intro, budget, count, rotation, searchable)
	}
	for c.level = catalogFull; c.level <= catalogNamesOnly; c.level++ {
		c.text = catalogText(skills, intro, c.level)
		if c.tokens = count(c.text); c.tokens <= budget {
			break
		}
	}
	c.listed = make([]string, len(skills))
	for i, s := range skills {
		c.listed[i] = s.Name
	}
	return c
}

// namesOver reports whether the names-only catalog is over budget. It
// counts prefixes of it that double in length, and stops at the first
// over budget, so that ten thousand names are not all tokenized to learn
// that a few hundred do not fit.
func namesOver(skills []Skill, intro string, budget int, count func(string) int) bool {
	for n := 64; ; n *= 2 {
		n = min(n, len(skills))
		if count(catalogText(skills[:n], intro, catalogNamesOnly)) > budget {
			return true
		}
		if n == len(skills) {
			return false
		}
	}
}

// someNames renders the catalog with as many names as fit budget, and a
// line saying how many more there are. So that no skill is starved, the
// slots are shared: the first three quarters go to the most useful skills
// (by Rank, then in the order given), the last quarter (at least one slot
// when there are two) to a window over the rest, which starts at a point
// the rotation key picks (FNV-1a of the task's ID, modulo the number of
// the rest) and wraps around. Every skill
// past the head is thus listed in as many tasks as the window is long,
// out of every len(rest) tasks with spread-out IDs.
func someNames(skills []Skill, intro string, budget int, count func(string) int, rotation string, searchable bool) renderedCatalog {
	c := renderedCatalog{level: catalogSomeNames}
	skills = slices.SortedStableFunc(slices.Values(skills), func(a, b Skill) int { return cmp.Compare(b.Rank, a.Rank) })
	// Estimate how many names fit from their lines' sizes, then render
	// and shrink until the whole text does fit.
	free := budget - count(catalogHead(intro)+unlistedLine(len(skills), searchable))
	slots := 0
	for _, s := range skills {
		if free -= count("- " + s.Name + "\n"); free < 0 {
			break
		}
		slots++
	}
	for {
		c.listed = rotated(skills, slots, rotation)
		c.unlisted = len(skills) - len(c.listed)
		var b strings.Builder
		b.WriteString(catalogHead(intro))
		for _, name := range c.listed {
			b.WriteString("- " + name + "\n")
		}
		b.WriteString(unlistedLine(c.unlisted, searchable))
		c.text = b.String()
		c.tokens = count(c.text)
		if c.tokens <= budget || slots == 0 {
			return c
		}
		// Shrink by the share of the text that is over, and by one at
		// least.
		slots -= max(1, slots*(c.tokens-budget)/c.tokens)
		slots = max(slots, 0)
	}
}

// rotated picks the names of the slots listed: the head of the order,
// then a window over the rest starting where the rotation key says.
func rotated(skills []Skill, slots int, rotation string) []string {
	slots = min(slots, len(skills))
	window := slots / 4
	if window == 0 && slots >= 2 {
		window = 1
	}
	head := slots - window
	out := make([]string, 0, slots)
	for _, s := range skills[:head] {
		out = append(out, s.Name)
	}
	rest := skills[head:]
	if window == 0 || len(rest) == 0 {
		return out
	}
	h := fnv.New64a()
	h.Write([]byte(rotation))
	start := int(h.Sum64() % uint64(len(rest)))
	for i := range window {
		out = append(out, rest[(start+i)%len(rest)].Name)
	}
	return out
}

// unlistedLine closes a catalog that does not list every skill.
func unlistedLine(n int, searchable bool) string {
	if searchable {
		return fmt.Sprintf("\n%d more skills are not listed. Call search_skills with a few words about what the task needs to find them by what they do, then activate_skill with the name it returns.\n", n)
	}
	return fmt.Sprintf("\n%d more skills are not listed.\n", n)
}

// Catalog introductions, per placement.
const (
	catalogIntroTranscript = "Skills hold instructions and files for specific tasks. When a task matches a skill, call activate_skill with its name before you start: its instructions come back as the result, and its files are placed in your working directory under skills/."
	catalogIntroContext    = "Skills hold instructions, files and tools for specific tasks. When a task matches a skill, call activate_skill with its name before you start: its instructions (and its tools) are loaded into <current_context> below, and its files are placed in your working directory under skills/. At most %d skills are loaded at once; loading one more unloads the least recently used."
)

func catalogHead(intro string) string {
	return "## Available skills\n\n" + intro + "\n\n"
}

func catalogText(skills []Skill, intro string, level int) string {
	var b strings.Builder
	b.WriteString(catalogHead(intro))
	for _, s := range skills {
		b.WriteString("- ")
		b.WriteString(s.Name)
		if level < catalogNamesOnly {
			desc := s.Description
			switch level {
			case catalogShort:
				desc = cut(desc, 200)
			case catalogShorter:
				desc = cut(desc, 60)
			}
			b.WriteString(": ")
			b.WriteString(strings.Join(strings.Fields(desc), " "))
		}
		if level == catalogFull && len(s.Files) > 1 {
			files := s.Files
			more := ""
			if len(files) > maxCatalogFiles {
				more = fmt.Sprintf(", and %d more", len(files)-maxCatalogFiles)
				files = files[:maxCatalogFiles]
			}
			fmt.Fprintf(&b, " (files: %s%s)", strings.Join(files, ", "), more)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// shortenedAt names the skills whose catalog entry loses something at
// level: its file list, description text past the level's cut, or (at
// level some names) the whole entry.
func shortenedAt(skills []Skill, level int, listed []string) []string {
	var out []string
	in := map[string]bool{}
	if level == catalogSomeNames {
		for _, n := range listed {
			in[n] = true
		}
	}
	for _, s := range skills {
		desc := utf8.RuneCountInString(strings.Join(strings.Fields(s.Description), " "))
		lost := level >= catalogNoFiles && len(s.Files) > 1
		switch level {
		case catalogShort:
			lost = lost || desc > 200
		case catalogShorter:
			lost = lost || desc > 60
		case catalogNamesOnly:
			lost = lost || desc > 0
		case catalogSomeNames:
			lost = lost || desc > 0 || !in[s.Name]
		}
		if lost {
			out = append(out, s.Name)
		}
	}
	return out
}

func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

// CatalogFit says how a catalog fits the budget a run gives it.
type CatalogFit struct {
	Window, Budget, Tokens int
	// Level names the detail kept, as catalog.trimmed events do: "full",
	// "no file lists", "descriptions shortened to 200 characters", …
	Level string
	// DescriptionCut is the length descriptions are cut to (200 or 60
	// characters), 0 when they are whole, and -1 when only names remain.
	DescriptionCut int
	// Shortened names the skills whose entry loses something at Level
	// (its file list or description text), in catalog order, at most the
	// first 200 as catalog.trimmed does; ShortenedMore counts the rest.
	Shortened     []string
	ShortenedMore int
	// Unlisted counts the skills not listed at all (level "some names").
	Unlisted int
}

// CatalogWindows are the context windows authoring tools show a catalog
// at: the common sizes of today's models.
func CatalogWindows() []int { return []int{32_000, 128_000, 200_000, 1_000_000} }

// FitCatalog renders the catalog of skills as a run with a context window
// of window tokens and the default catalog share would (transcript
// placement), and says how it fit: authoring tools use it to tell at which
// windows a description would be cut, with the runtime's own renderer
// rather than a copy of its rules.
func FitCatalog(skills []Skill, window int, count func(string) int) CatalogFit {
	budget := int(DefaultCatalogShare * float64(window))
	c := renderCatalog(skills, catalogIntroTranscript, budget, count, "", true)
	f := CatalogFit{Window: window, Budget: budget, Tokens: c.tokens, Level: catalogLevelNames[c.level], Unlisted: c.unlisted}
	f.Shortened, f.ShortenedMore = capped(shortenedAt(skills, c.level, c.listed))
	switch c.level {
	case catalogShort:
		f.DescriptionCut = 200
	case catalogShorter:
		f.DescriptionCut = 60
	case catalogNamesOnly, catalogSomeNames:
		f.DescriptionCut = -1
	}
	return f
}

// CatalogEntry is how much of a skill's entry a catalog shows.
type CatalogEntry int

const (
	// CatalogEntryWhole: its name, whole description and file list.
	CatalogEntryWhole CatalogEntry = iota
	// CatalogEntryShortened: its file list or part of its description
	// was cut.
	CatalogEntryShortened
	// CatalogEntryNameOnly: its name alone.
	CatalogEntryNameOnly
)

// CatalogEntryAt says how a catalog at the level named level (as
// catalog.trimmed events name it; "" is "full") shows skill s, by the
// rules the catalog is rendered with, so that readers of a log need not
// copy them. ok is false for a level name this build does not know.
func CatalogEntryAt(s Skill, level string) (entry CatalogEntry, ok bool) {
	if level == "" {
		level = catalogLevelNames[catalogFull]
	}
	i := slices.Index(catalogLevelNames[:], level)
	switch {
	case i < 0:
		return CatalogEntryWhole, false
	case i >= catalogNamesOnly:
		return CatalogEntryNameOnly, true
	case len(shortenedAt([]Skill{s}, i, nil)) > 0:
		return CatalogEntryShortened, true
	}
	return CatalogEntryWhole, true
}
