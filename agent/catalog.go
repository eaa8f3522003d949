package agent

import (
	"fmt"
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
)

var catalogLevelNames = [...]string{"full", "no file lists", "descriptions shortened to 200 characters", "descriptions shortened to 60 characters", "names only"}

// maxCatalogFiles caps the files listed per skill in the catalog.
const maxCatalogFiles = 12

// renderCatalog renders the catalog block of the disclosed skills at the
// most detailed level that fits budget tokens. It also lists each skill's
// files (which source systems left out, so models could not tell what a
// skill brings before activating it).
func renderCatalog(skills []Skill, intro string, budget int, count func(string) int) (text string, level, tokens int) {
	for level = catalogFull; level <= catalogNamesOnly; level++ {
		text = catalogText(skills, intro, level)
		if tokens = count(text); tokens <= budget {
			return text, level, tokens
		}
	}
	return text, catalogNamesOnly, tokens
}

// Catalog introductions, per placement.
const (
	catalogIntroTranscript = "Skills hold instructions and files for specific tasks. When a task matches a skill, call activate_skill with its name before you start: its instructions come back as the result, and its files are placed in your working directory under skills/."
	catalogIntroContext    = "Skills hold instructions, files and tools for specific tasks. When a task matches a skill, call activate_skill with its name before you start: its instructions (and its tools) are loaded into <current_context> below, and its files are placed in your working directory under skills/. At most %d skills are loaded at once; loading one more unloads the least recently used."
)

func catalogText(skills []Skill, intro string, level int) string {
	var b strings.Builder
	b.WriteString("## Available skills\n\n")
	b.WriteString(intro)
	b.WriteString("\n\n")
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
// level: its file list, or description text past the level's cut.
func shortenedAt(skills []Skill, level int) []string {
	var out []string
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
	// Level names the detail kept, as catalog.shortened events do: "full",
	// "no file lists", "descriptions shortened to 200 characters", …
	Level string
	// DescriptionCut is the length descriptions are cut to (200 or 60
	// characters), 0 when they are whole, and -1 when only names remain.
	DescriptionCut int
	// Shortened names the skills whose entry loses something at Level
	// (its file list or description text), in catalog order.
	Shortened []string
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
	_, level, tokens := renderCatalog(skills, catalogIntroTranscript, budget, count)
	f := CatalogFit{Window: window, Budget: budget, Tokens: tokens, Level: catalogLevelNames[level], Shortened: shortenedAt(skills, level)}
	switch level {
	case catalogShort:
		f.DescriptionCut = 200
	case catalogShorter:
		f.DescriptionCut = 60
	case catalogNamesOnly:
		f.DescriptionCut = -1
	}
	return f
}
