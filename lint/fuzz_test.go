package lint_test

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilld/skilld/lint"
	"github.com/skilld/skilld/pack"
)

// FuzzCheck lints a skill whose SKILL.md and other files' text are
// arbitrary: Check never fails on its content, every finding names a rule
// that exists, and is located in a file of the package (or a folder of
// it) at a line the file has.
func FuzzCheck(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*/*/SKILL.md")
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data), "See [b](../b.md) and scripts/x.py.\nimport helpers.util\nconst l = require(\"./lib\");\n")
	}
	c := count(f)
	ids := map[string]bool{}
	for _, r := range lint.Rules() {
		ids[r.ID] = true
	}
	f.Fuzz(func(t *testing.T, skillMD, other string) {
		files := map[string]string{
			"SKILL.md":        skillMD,
			"references/a.md": other,
			"scripts/x.py":    other,
			"helpers/util.py": other,
			"b.md":            other,
		}
		var fs []pack.File
		for p, data := range files {
			fs = append(fs, pack.File{Path: p, Data: []byte(data)})
		}
		p, err := pack.New(fs, pack.ArchiveLimits())
		if err != nil {
			t.Fatal(err)
		}
		r, err := lint.Check(t.Context(), p, lint.Options{Dir: "fuzz", Count: c})
		if err != nil {
			t.Fatal(err)
		}
		for _, fd := range r.Findings {
			if !ids[fd.Rule] || fd.Message == "" {
				t.Errorf("finding %+v", fd)
			}
			text, isFile := files[fd.File]
			isDir := strings.HasSuffix(fd.File, "/") && path.Dir(fd.File+"x") != "."
			if fd.File != "" && !isFile && !isDir {
				t.Errorf("finding in %q, which the package does not hold: %+v", fd.File, fd)
			}
			if fd.Line < 0 || (isFile && fd.Line > strings.Count(text, "\n")+2) {
				t.Errorf("finding at line %d of a %d-line file: %+v", fd.Line, strings.Count(text, "\n")+1, fd)
			}
		}
	})
}
