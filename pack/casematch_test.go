package pack_test

import (
	"slices"
	"testing"

	"github.com/skilld/skilld/pack"
)

func TestCaseMatches(t *testing.T) {
	paths := []string{"SKILL.md", "reference.md", "Scripts/Fill_Form.py", "caf\u00e9.md", "docs/STRASSE.md"}
	for want, expect := range map[string][]string{
		"REFERENCE.md":         {"reference.md"},
		"reference.md":         nil, // the file itself is not a miss
		"scripts/fill_form.PY": {"Scripts/Fill_Form.py"},
		"CAFE\u0301.md":        {"caf\u00e9.md"}, // decomposed, upper case
		"docs/straße.md":       {"docs/STRASSE.md"},
		"FORMS.md":             nil,
		"Scripts":              nil, // a folder is not a file
	} {
		if got := pack.CaseMatches(paths, want); !slices.Equal(got, expect) {
			t.Errorf("CaseMatches(%q) = %q, want %q", want, got, expect)
		}
	}
	if got := pack.CaseMatches([]string{"README.md", "readme.md"}, "Readme.md"); len(got) != 2 {
		t.Errorf("two names on a case-sensitive disk: %q", got)
	}
}
