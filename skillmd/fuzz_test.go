package skillmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/skilld/skilld/skillmd"
)

// FuzzParse checks that no input makes the parser panic, and that what it
// accepts obeys the specification's rules. Its seed corpus lives in
// testdata/fuzz/FuzzParse and runs with every `go test`.
func FuzzParse(f *testing.F) {
	f.Add([]byte("---\nname: my-skill\ndescription: A test skill\n---\nBody\n"), false)
	f.Add([]byte("\uFEFF---\r\nname: навык\r\ndescription: d\r\nmetadata: {v: 1.0}\r\n---\r\n"), true)
	f.Add([]byte("---\na: &a [1]\nb: *a\n---\n"), false)
	matches, _ := filepath.Glob("../examples/skills/*/SKILL.md")
	for _, m := range matches {
		if data, err := os.ReadFile(m); err == nil {
			f.Add(data, false)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, lenient bool) {
		r := skillmd.Check(data, skillmd.Options{Lenient: lenient})
		_, _, err := skillmd.Parse(data, skillmd.Options{Lenient: lenient})
		if (err == nil) != r.Valid() {
			t.Fatalf("Parse error %v disagrees with Check validity %v", err, r.Valid())
		}
		if !r.Valid() {
			for _, e := range r.Errors {
				if e.Field == "" || e.Message == "" {
					t.Fatalf("problem without field or message: %+v", e)
				}
			}
			return
		}
		s := r.Skill
		if s == nil {
			t.Fatal("valid report without a skill")
		}
		if p := skillmd.NameProblems(s.Name); len(p) > 0 || s.Name == "" {
			t.Fatalf("accepted name %q breaks %v", s.Name, p)
		}
		if s.Name != skillmd.NormalizeName(s.Name) {
			t.Fatalf("accepted name %q is not normalized", s.Name)
		}
		if n := utf8.RuneCountInString(s.Description); n == 0 || n > skillmd.MaxDescriptionLength {
			t.Fatalf("accepted description of %d runes", n)
		}
		if utf8.RuneCountInString(s.Compatibility) > skillmd.MaxCompatibilityLength {
			t.Fatal("accepted compatibility over the limit")
		}
		if !lenient && len(s.Extra) > 0 {
			t.Fatalf("strict mode kept extra fields %v", s.Extra)
		}
		if strings.TrimSpace(s.Body) != s.Body {
			t.Fatal("body not trimmed")
		}
	})
}

// FuzzParseFile checks that ParseFile of a file holding the input gives
// what Parse gives of the input, with the file's folder name to match:
// the same skill, warnings and problems, the error naming the file. Its
// seed corpus (testdata/fuzz/FuzzParseFile: files around the sizes
// ParseFile reads in) runs with every `go test`.
func FuzzParseFile(f *testing.F) {
	f.Add([]byte("---\nname: skill\ndescription: A test skill\n---\nBody\n"), false)
	f.Add([]byte("\uFEFF---\r\nname: skill\r\ndescription: d\r\nx: 1\r\n---\r\n"), true)
	f.Add([]byte("---\nname: other\ndescription: d\n---\n"), false)
	matches, _ := filepath.Glob("../examples/skills/*/SKILL.md")
	for _, m := range matches {
		if data, err := os.ReadFile(m); err == nil {
			f.Add(data, true)
		}
	}
	root := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, lenient bool) {
		p := putSkill(t, root, "skill", data)
		sameAsParse(t, p, "skill", data, skillmd.Options{Lenient: lenient})
	})
}
