package scan_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/scan"
)

// FuzzScan scans packages whose SKILL.md, script, skilld.yaml and asset
// bytes are arbitrary: Scan never fails on content, and every finding
// names a rule of the scanner, a file of the package and a line the file
// has, with a valid UTF-8 excerpt of bounded length. The seeds are every
// fixture of testdata.
func FuzzScan(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*/*/*")
	more, _ := filepath.Glob("testdata/*/*/*/*")
	for _, p := range append(seeds, more...) {
		data, err := os.ReadFile(p)
		if err != nil {
			continue // a folder
		}
		f.Add(data, []byte("network: [api.github.com]\n"), data)
	}
	s := scan.Default()
	ids := map[string]bool{}
	for _, r := range s.Rules() {
		ids[r.ID] = true
	}
	f.Fuzz(func(t *testing.T, text, decl, asset []byte) {
		files := []pack.File{
			{Path: "SKILL.md", Data: text},
			{Path: "scripts/run.sh", Data: text, Exec: true},
			{Path: "scripts/run.py", Data: asset},
			{Path: "assets/blob", Data: asset},
			{Path: "skilld.yaml", Data: decl},
		}
		pkg, err := pack.New(files, pack.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		found, err := s.Scan(t.Context(), pkg)
		if err != nil {
			t.Fatal(err)
		}
		for _, fd := range found {
			file, ok := pkg.File(fd.File)
			switch {
			case !ids[fd.Rule]:
				t.Fatalf("unknown rule %q", fd.Rule)
			case !ok:
				t.Fatalf("finding in %q, not a file of the package", fd.File)
			case fd.Line < 0 || fd.Line > bytes.Count(file.Data, []byte("\n"))+1:
				t.Fatalf("finding at line %d of a %d-line file", fd.Line, bytes.Count(file.Data, []byte("\n"))+1)
			case !utf8.ValidString(fd.Excerpt) || !utf8.ValidString(fd.Message):
				t.Fatalf("invalid UTF-8 in %+v", fd)
			case utf8.RuneCountInString(fd.Excerpt) > 200:
				t.Fatalf("excerpt of %d runes", utf8.RuneCountInString(fd.Excerpt))
			case strings.ContainsRune(fd.Excerpt, 0x202E) || strings.ContainsRune(fd.Excerpt, 0x200B):
				t.Fatalf("excerpt shows a hidden character: %q", fd.Excerpt)
			}
		}
	})
}

// FuzzParseRules: any bytes as a rules file either parse into a scanner
// whose rules all have an ID and a valid severity, or fail with ErrRules;
// never a panic.
func FuzzParseRules(f *testing.F) {
	data, err := os.ReadFile("rules/rules.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte("version: 1\nrules:\n  - id: a\n    severity: low\n    summary: s\n    message: m\n    keywords: [x]\n    patterns: ['(?i)x']\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := scan.New(data)
		if err != nil {
			return
		}
		for _, r := range s.Rules() {
			if r.ID == "" || !r.Severity.Valid() {
				t.Fatalf("rule %+v", r)
			}
		}
	})
}
