package skillmd_test

import (
	"os"
	"testing"

	"github.com/skilld/skilld/skillmd"
)

// BenchmarkCheck parses and validates one typical SKILL.md (frontmatter with
// the optional fields and a page of instructions).
func BenchmarkCheck(b *testing.B) {
	data, err := os.ReadFile("../examples/skills/csv-inspector/SKILL.md")
	if err != nil {
		b.Fatal(err)
	}
	opts := skillmd.Options{Dir: "csv-inspector"}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if r := skillmd.Check(data, opts); !r.Valid() {
			b.Fatal(r.Errors)
		}
	}
}
