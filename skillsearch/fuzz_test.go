package skillsearch_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/skilld/skilld/skillsearch"
)

// FuzzTokens: no input makes the tokenizer panic; every token is
// non-empty, valid UTF-8, lower case, bounded and free of separators; and
// tokenizing the tokens again gives them back (a query and a skill that
// share a word share its token). Its seed corpus is in
// testdata/fuzz/FuzzTokens and runs with every `go test`.
func FuzzTokens(f *testing.F) {
	for _, s := range []string{"", "Merge PDF files", "csvInspector v2", "naïve Übersetzung 翻訳", "a\x00b\xffc", "ß İstanbul ΣΑΣ", "running formats ies sses"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		toks := skillsearch.Tokens(s)
		for _, tok := range toks {
			if tok == "" || !utf8.ValidString(tok) || len(tok) > 4*40 {
				t.Fatalf("bad token %q of %q", tok, s)
			}
			if strings.ContainsFunc(tok, func(r rune) bool { return r == ' ' || r == '-' || r == '\n' }) {
				t.Fatalf("token %q of %q holds a separator", tok, s)
			}
		}
		ix := skillsearch.New([]skillsearch.Skill{{Name: "x", Description: s}})
		if len(toks) > 0 && len(ix.Search(s, 1)) != 1 {
			t.Fatalf("%q does not find the skill it describes", s)
		}
	})
}

// FuzzHeadings: no SKILL.md makes Headings panic, and what it returns is
// within its limits.
func FuzzHeadings(f *testing.F) {
	f.Add([]byte("---\nname: x\n---\n# Title\n```\n# no\n```\n## Usage ##\n"))
	f.Add([]byte("\uFEFF---\r\n---\r\n#\ttab\r\n"))
	f.Fuzz(func(t *testing.T, md []byte) {
		hs := skillsearch.Headings(md)
		if len(hs) > skillsearch.MaxHeadings {
			t.Fatalf("%d headings", len(hs))
		}
		for _, h := range hs {
			if h == "" || !utf8.ValidString(h) || utf8.RuneCountInString(h) > skillsearch.MaxHeadingRunes {
				t.Fatalf("bad heading %q", h)
			}
		}
	})
}
