package skillmd

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"unicode/utf8"
)

// realFrontmatters are frontmatters written the ways real skills write
// them (the public skill collections' conventions), for the fast path's
// seed corpus and its tests.
var realFrontmatters = []string{
	"name: pdf\ndescription: Comprehensive PDF manipulation toolkit for extracting text and tables, creating new PDFs, merging/splitting documents, and handling forms. When Claude needs to fill in a PDF form or programmatically process, generate, or analyze PDF documents at scale.\nlicense: Proprietary. LICENSE.txt has complete terms\n",
	"name: skill-creator\ndescription: Guide for creating effective skills. This skill should be used when users want to create a new skill (or update an existing skill) that extends Claude's capabilities with specialized knowledge, workflows, or tool integrations.\nlicense: Complete terms in LICENSE.txt\n",
	"name: webapp-testing\ndescription: Toolkit for interacting with and testing local web applications using Playwright. Supports verifying frontend functionality, debugging UI behavior, capturing browser screenshots, and viewing browser logs.\nlicense: Complete terms in LICENSE.txt\n",
	"name: release\ndescription: \"Prepare a release: bump the version, write the changelog, tag.\"\nallowed-tools: Bash Read Write\nmetadata:\n  author: acme\n  version: \"1.0\"\n",
	"name: csv-tools\ndescription: 'Inspect CSV files: columns, types, row counts.'\ncompatibility: Requires python3\nmetadata:\n    owner: data-team\n    tier: gold\n",
	"name: notes\ndescription: Meeting notes\nmetadata:\n  version: 1.0\n",
	"name: notes\ndescription: Meeting notes\nmetadata:\n",
	"name: notes\ndescription: Meeting notes\nallowed-tools:\n  - Read\n  - Write\n",
	"name: notes\ndescription: Meeting notes # comment\n",
	"name: notes\ndescription: >\n  folded\n  text\n",
	"name: notes\ndescription: a\n  continued\n",
	"name: yes\ndescription: true\n",
	"name: notes\ndescription: 2024-01-01\n",
	"name: notes\ndescription: 12\nlicense: null\n",
	"name: notes\nname: again\ndescription: d\n",
	"name: notes\ndescription: d\nx-custom: kept\n",
	"name: Notes\ndescription: \"quoted \\\"escapes\\\"\"\n",
	"name:notes\ndescription: d\n",
	"name: notes\ndescription: uses [brackets], {braces}, commas, and a: colon\n",
	"name: notes\ndescription: ends with colon:\n",
	"name: notes\ndescription: it's a tool for 'quotes'\n",
	"name: notes\ndescription: \"\"\n",
	"name: notes\ndescription:\n",
	"name: notes\ndescription: d\nmetadata:\n  a: 1\n   b: 2\n",
	"name: notes\ndescription: d\nmetadata:\n  a: x\n  a: y\n",
	"name: notes\n\ndescription: d\n",
	"name: naïve-skill\ndescription: Ünïcödé déscription — with dashes\n",
	"name: notes\ndescription: d\t\n",
	"name: notes\ndescription: ~\n",
	"name: notes\ndescription: .inf\n",
	"name: notes\ndescription: 0x1F\n",
	"name: notes\ndescription: - item\n",
	"name: notes\ndescription: d\nmetadata: {a: b}\n",
}

// FuzzFastPath is the differential test of the fast path: whenever it
// accepts a frontmatter, the YAML parser must accept it too, and
// validation of the two results must give the same skill, errors and
// warnings, strict and lenient. Its seed corpus (testdata/fuzz/FuzzFastPath
// and the seeds below) runs with every `go test`.
func FuzzFastPath(f *testing.F) {
	for _, fm := range realFrontmatters {
		f.Add([]byte(fm))
	}
	matches, _ := filepath.Glob("../examples/skills/*/SKILL.md")
	for _, m := range matches {
		if data, err := os.ReadFile(m); err == nil {
			var r Report
			if fm, _, ok := split(string(data), &r); ok {
				f.Add([]byte(fm))
			}
		}
	}
	f.Fuzz(func(t *testing.T, fm []byte) {
		if !utf8.Valid(fm) {
			return // split refuses it before either path sees it
		}
		fm = bytes.ReplaceAll(fm, []byte("\r\n"), []byte("\n"))
		fast, ok := fastFrontmatter(string(fm))
		if !ok {
			return
		}
		var pr Report
		slow, ok := parseFrontmatter(string(fm), &pr)
		if !ok {
			t.Fatalf("the fast path read %q, the parser refuses it: %v", fm, pr.Errors)
		}
		sameFields(t, fm, fast, slow)
		for _, lenient := range []bool{false, true} {
			opts := Options{Lenient: lenient, Dir: "notes"}
			var rf, rs Report
			sf, ss := validate(fast, opts, &rf), validate(slow, opts, &rs)
			if !reflect.DeepEqual(sf, ss) {
				t.Fatalf("%q (lenient %v): fast path %+v, parser %+v", fm, lenient, sf, ss)
			}
			if !reflect.DeepEqual(rf, rs) {
				t.Fatalf("%q (lenient %v): fast path reports %+v, parser %+v", fm, lenient, rf, rs)
			}
		}
	})
}

// sameFields compares the entries the two paths decoded.
func sameFields(t *testing.T, fm []byte, fast, slow []field) {
	t.Helper()
	if len(fast) != len(slow) {
		t.Fatalf("%q: %d fields on the fast path, %d from the parser", fm, len(fast), len(slow))
	}
	for i := range fast {
		f, s := fast[i], slow[i]
		if f.key != s.key || f.line != s.line || kind(f.value) != kind(s.value) {
			t.Fatalf("%q: field %d is %s/%d/%s on the fast path, %s/%d/%s from the parser", fm, i, f.key, f.line, kind(f.value), s.key, s.line, kind(s.value))
		}
		if f.value != nil && literal(f.value) != literal(s.value) {
			t.Fatalf("%q: field %s is %q on the fast path, %q from the parser", fm, f.key, literal(f.value), literal(s.value))
		}
	}
}

// The fast path takes the frontmatter most skills have, and leaves the
// rest to the parser.
func TestFastPathCoverage(t *testing.T) {
	taken := 0
	for _, fm := range realFrontmatters[:7] {
		if _, ok := fastFrontmatter(fm); ok {
			taken++
		} else {
			t.Errorf("the fast path left a common frontmatter to the parser: %q", fm)
		}
	}
	for _, fm := range []string{"name: notes\ndescription: Meeting notes\nallowed-tools:\n  - Read\n", "name: yes\ndescription: true\n", "name: notes\ndescription: >\n  folded\n"} {
		if _, ok := fastFrontmatter(fm); ok {
			t.Errorf("the fast path took %q, which it should leave to the parser", fm)
		}
	}
}
