package lint_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/skilld/skilld/lint"
	"github.com/skilld/skilld/pack"
)

const trigger = " Use when the user asks to export a Markdown table."

// lintFiles lints a package of the files given (path → content; paths in
// execs get the executable bit) as the skill "tables".
func lintFiles(t *testing.T, c func(string) int, files map[string]string, execs ...string) []lint.Finding {
	t.Helper()
	var fs []pack.File
	for p, data := range files {
		fs = append(fs, pack.File{Path: p, Data: []byte(data), Exec: slices.Contains(execs, p)})
	}
	p, err := pack.New(fs, pack.ArchiveLimits())
	if err != nil {
		t.Fatal(err)
	}
	r, err := lint.Check(t.Context(), p, lint.Options{Dir: "tables", Count: c})
	if err != nil {
		t.Fatal(err)
	}
	return r.Findings
}

func skillMD(description, body string) string {
	return "---\nname: tables\ndescription: " + description + "\n---\n\n" + body
}

// rules returns the IDs of the findings, with FILE for those about
// another file than SKILL.md ("unreferenced-file data/").
func rules(findings []lint.Finding) []string {
	var out []string
	for _, f := range findings {
		id := f.Rule
		if f.File != "SKILL.md" {
			id += " " + f.File
		}
		out = append(out, id)
	}
	return out
}

func TestDescriptionRules(t *testing.T) {
	c := count(t)
	for _, tc := range []struct {
		description string
		want        []string
	}{
		{"Export tables as CSVs. Use when asked t", []string{"description-short"}}, // 39 characters
		{"Export tables as CSVs. Use when asked to", nil},                          // 40
		{"Export Markdown tables to CSV files whenever the user needs spreadsheet data.", nil},
		{"Export Markdown tables to CSV files if the user wants spreadsheets of them.", nil},
		{"Export Markdown tables to CSV files, for requests about spreadsheets.", nil},
		{"Export Markdown tables to CSV files, keeping their header rows.", []string{"description-no-trigger"}},
		{"Use this skill for Markdown tables that must become CSV files.", nil},
		{"A helpful utility that does various things with stuff when you need it.", []string{"description-vague"}},
		{"Lorem ipsum table exporter for CSV spreadsheets. Use when asked for CSV.", []string{"description-placeholder"}},
		{"Table exporter for CSV spreadsheets (FIXME). Use when asked for CSV.", []string{"description-placeholder"}},
		// Three hundred characters of description fit a 20-skill catalog
		// at 128k.
		{strings.Repeat("Export Markdown tables to CSV, TSV and JSON Lines. ", 5) + trigger, nil},
	} {
		got := rules(lintFiles(t, c, map[string]string{"SKILL.md": skillMD(tc.description, "Export.\n")}))
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q: %v, want %v", tc.description, got, tc.want)
		}
	}
}

// TestCatalogBudgetNamesWindows: the finding says at which windows the
// description is cut and to what, from the runtime's own renderer.
func TestCatalogBudgetNamesWindows(t *testing.T) {
	r := lintDir(t, "testdata/bad/description-catalog-budget", count(t))
	msg := r.Findings[0].Message
	for _, want := range []string{"20-skill agent", "32k: cut to 60 characters", "128k: cut to 200 characters"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q: %s", want, msg)
		}
	}
	if strings.Contains(msg, "1M") {
		t.Errorf("a 1M window keeps the description whole: %s", msg)
	}
}

func TestBodyTooLongSaysWhere(t *testing.T) {
	r := lintDir(t, "testdata/bad/body-too-long", count(t))
	if msg := r.Findings[0].Message; !strings.Contains(msg, "over 5000") || !strings.Contains(msg, "in windows under about 1") {
		t.Errorf("message: %s", msg)
	}
}

// TestMentions: how a text may name a file, and what does not count.
func TestMentions(t *testing.T) {
	c := count(t)
	desc := "Export Markdown tables to CSV files." + trigger
	extra := map[string]string{
		"scripts/run.sh":      "#!/bin/sh\n",
		"scripts/run.sh.bak":  "old\n",
		"helpers/util.py":     "X = 1\n",
		"scripts/main.js":     "#!/usr/bin/env node\nconst lib = require(\"./lib\");\n",
		"scripts/lib.js":      "module.exports = {};\n",
		"assets/a.txt":        "a\n",
		"assets/b.txt":        "b\n",
		"references/guide.md": "# Guide\n",
	}
	for _, tc := range []struct {
		name, body   string
		unreferenced []string
	}{
		{"all named", "Run ./scripts/run.sh, `scripts/run.sh.bak`, skills/tables/scripts/main.js.\n\n" +
			"```python\nfrom helpers.util import X\n```\n\nSee `assets` and [the guide](references/guide.md).\n", nil},
		{"a longer name is not the file's", "Run scripts/run.sh.bak and scripts/main.js.\n\nimport helpers.util\n\n" +
			"See ./assets and references/guide.md.\n", []string{"scripts/run.sh"}},
		{"a sentence's period is no extension", "Run scripts/run.sh. Then scripts/run.sh.bak, scripts/main.js, helpers/util.py, " +
			"assets/ and references/guide.md.\n", nil},
		{"a bare word is no folder", "Run scripts/run.sh, scripts/run.sh.bak, scripts/main.js, helpers/util.py, " +
			"the assets and references/guide.md.\n", []string{"assets/"}},
		{"a module nobody imports", "Run scripts/run.sh, scripts/run.sh.bak, `assets/`, references/guide.md and scripts/main.js.\n",
			[]string{"helpers/util.py"}},
	} {
		files := map[string]string{"SKILL.md": skillMD(desc, tc.body)}
		for p, data := range extra {
			files[p] = data
		}
		var got []string
		for _, f := range lintFiles(t, c, files, "scripts/run.sh", "scripts/main.js") {
			if f.Rule != "unreferenced-file" {
				t.Errorf("%s: unexpected %+v", tc.name, f)
				continue
			}
			got = append(got, f.File)
		}
		if !slices.Equal(got, tc.unreferenced) {
			t.Errorf("%s: unreferenced %v, want %v", tc.name, got, tc.unreferenced)
		}
	}
}

// TestScriptsRunByInterpreter: a script SKILL.md runs through an
// interpreter needs neither a #! line nor the executable bit; one it
// names otherwise needs both.
func TestScriptsRunByInterpreter(t *testing.T) {
	c := count(t)
	desc := "Export Markdown tables to CSV files." + trigger
	for _, tc := range []struct {
		command string
		bare    bool // the script gets both findings
	}{
		{"python3 scripts/x.py", false},
		{"`uv run scripts/x.py`", false},
		{"python -u ./scripts/x.py", false},
		{"bash -e $SKILL_DIR/scripts/x.py", false},
		{"Run scripts/x.py", true},
		{"./scripts/x.py", true},
		{"The output of scripts/x.py", true},
	} {
		findings := lintFiles(t, c, map[string]string{"SKILL.md": skillMD(desc, tc.command+"\n"), "scripts/x.py": "print(1)\n"})
		got := rules(findings)
		var want []string
		if tc.bare {
			want = []string{"script-not-executable scripts/x.py", "script-shebang scripts/x.py"}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%q: %v, want %v", tc.command, got, want)
		}
	}
}

// TestOneFindingPerFolder: a folder nothing mentions is one finding, the
// outermost; a file beside mentioned ones is its own.
func TestOneFindingPerFolder(t *testing.T) {
	desc := "Export Markdown tables to CSV files." + trigger
	got := rules(lintFiles(t, count(t), map[string]string{
		"SKILL.md":            skillMD(desc, "Read references/a.md.\n"),
		"references/a.md":     "a\n",
		"references/b.md":     "b\n",
		"data/x/1.csv":        "1\n",
		"data/x/2.csv":        "2\n",
		"data/y.csv":          "y\n",
		"LICENSE":             "MIT\n",
		"scripts/__init__.py": "",
	}))
	want := []string{"unreferenced-file data/", "unreferenced-file references/b.md"}
	if !slices.Equal(got, want) {
		t.Errorf("%v, want %v", got, want)
	}
}

// TestCheckWithoutSkillMD: a package without SKILL.md is one finding.
func TestCheckWithoutSkillMD(t *testing.T) {
	got := lintFiles(t, count(t), map[string]string{"README.md": "hi\n"})
	if len(got) != 1 || got[0].Rule != "skill-invalid" || got[0].Severity != lint.Error || !strings.Contains(got[0].Message, "SKILL.md") {
		t.Errorf("%+v", got)
	}
}

func TestCheckNeedsCount(t *testing.T) {
	p, err := pack.New([]pack.File{{Path: "SKILL.md", Data: []byte(skillMD("x", ""))}}, pack.ArchiveLimits())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lint.Check(t.Context(), p, lint.Options{}); err == nil {
		t.Error("Check without a token count succeeded")
	}
}
