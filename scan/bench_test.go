package scan

import (
	"strings"
	"testing"

	"github.com/skilld/skilld/pack"
)

// benchPackage is a skill of realistic shape: a 400-line SKILL.md, a
// 300-line script and a reference, about 65 KB of text.
func benchPackage(b testing.TB) *pack.Package {
	b.Helper()
	md := "---\nname: bench\ndescription: A skill to benchmark the scanner with.\n---\n" +
		strings.Repeat("Read the input file, check each row against the schema and write the report to out/report.md.\n", 400)
	script := "#!/usr/bin/env python3\nimport json, sys\n" + strings.Repeat("    rows = [r for r in data if r.get('id') is not None]  # keep rows with ids\n", 300)
	pkg, err := pack.New([]pack.File{
		{Path: "SKILL.md", Data: []byte(md)},
		{Path: "scripts/check.py", Data: []byte(script), Exec: true},
		{Path: "references/schema.md", Data: []byte(strings.Repeat("| field | type | required |\n", 200))},
	}, pack.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	return pkg
}

func benchmarkScanner(b *testing.B, s *Scanner) {
	pkg := benchPackage(b)
	b.SetBytes(pkg.Size())
	for b.Loop() {
		if _, err := s.Scan(b.Context(), pkg); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScan scans the package with every rule.
func BenchmarkScan(b *testing.B) { benchmarkScanner(b, Default()) }

// BenchmarkScanFloor is the same scan done the simplest way: every
// pattern on every line, no keywords first.
func BenchmarkScanFloor(b *testing.B) { benchmarkScanner(b, simplest(b)) }
