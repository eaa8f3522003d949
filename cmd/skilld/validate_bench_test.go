package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilld/skilld/skillmd"
)

// makeSkillTree writes n typical skills (a SKILL.md of about 1.5 KB, a script
// and a reference) under a fresh directory.
func makeSkillTree(tb testing.TB, n int) string {
	tb.Helper()
	root := tb.TempDir()
	body := strings.Repeat("Follow these steps carefully and report what you found.\n", 20)
	for i := range n {
		name := fmt.Sprintf("skill-%04d", i)
		dir := filepath.Join(root, name)
		for _, d := range []string{"scripts", "references"} {
			if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
				tb.Fatal(err)
			}
		}
		md := fmt.Sprintf("---\nname: %s\ndescription: Skill number %d, used to measure validation of a large folder.\nlicense: MIT\nmetadata:\n  version: \"1.0\"\n---\n# %s\n\n%s", name, i, name, body)
		files := map[string]string{"SKILL.md": md, "scripts/run.sh": "#!/bin/sh\necho run\n", "references/notes.md": body}
		for p, c := range files {
			if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
				tb.Fatal(err)
			}
		}
	}
	return root
}

// BenchmarkValidate1000 measures `skilld validate DIR` on a folder of 1,000
// skills from a warm page cache: discovery, reading every file, digesting
// each package and validating each SKILL.md.
func BenchmarkValidate1000(b *testing.B) {
	root := makeSkillTree(b, 1000)
	b.ReportAllocs()
	for b.Loop() {
		sources := resolveSources(b.Context(), root)
		results := forEach(b.Context(), sources, func(ctx2 context.Context, s source) validation {
			return validateSource(ctx2, s, skillmd.Options{})
		})
		if len(results) != 1000 || !results[999].Valid {
			b.Fatalf("got %d results, last %+v", len(results), results[len(results)-1])
		}
	}
}
