package agent

// CatalogText exposes the catalog renderer's levels to tests.
func CatalogText(skills []Skill, level int) string {
	return catalogText(skills, catalogIntroTranscript, level)
}
