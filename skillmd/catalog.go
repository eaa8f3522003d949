package skillmd

import "strings"

// CatalogEntry is one skill in an <available_skills> block.
type CatalogEntry struct {
	Name        string
	Description string
	// Location is where the agent can find the skill's SKILL.md.
	Location string
}

// xmlEscaper escapes exactly what Python's html.escape does, so the block is
// byte-for-byte what the reference implementation renders.
var xmlEscaper = strings.NewReplacer(
	"&", "&amp;",
	"<", "&lt;",
	">", "&gt;",
	`"`, "&quot;",
	"'", "&#x27;",
)

// RenderCatalog renders the <available_skills> XML block that lists skills
// for a system prompt, in the reference layout: one element or text per
// line, every value escaped.
func RenderCatalog(entries []CatalogEntry) string {
	var b strings.Builder
	b.WriteString("<available_skills>\n")
	for _, e := range entries {
		b.WriteString("<skill>\n<name>\n")
		b.WriteString(xmlEscaper.Replace(e.Name))
		b.WriteString("\n</name>\n<description>\n")
		b.WriteString(xmlEscaper.Replace(e.Description))
		b.WriteString("\n</description>\n<location>\n")
		b.WriteString(xmlEscaper.Replace(e.Location))
		b.WriteString("\n</location>\n</skill>\n")
	}
	b.WriteString("</available_skills>")
	return b.String()
}
