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
