package skillmd_test

import (
	"fmt"

	"github.com/skilld/skilld/skillmd"
)

func ExampleCheck() {
	r := skillmd.Check([]byte("---\nname: Report-Writer\ndescription: Writes reports.\n---\n# Steps\n"), skillmd.Options{})
	for _, e := range r.Errors {
		fmt.Printf("%s: %s\n", e.Field, e.Message)
	}
	// Output:
	// name: Skill name 'Report-Writer' must be lowercase
}

func ExampleRenderCatalog() {
	fmt.Println(skillmd.RenderCatalog([]skillmd.CatalogEntry{
		{Name: "csv-inspector", Description: "Summarize <CSV> files", Location: "skills/csv-inspector/SKILL.md"},
	}))
	// Output:
	// <available_skills>
	// <skill>
	// <name>
	// csv-inspector
	// </name>
	// <description>
	// Summarize &lt;CSV&gt; files
	// </description>
	// <location>
	// skills/csv-inspector/SKILL.md
	// </location>
	// </skill>
	// </available_skills>
}
