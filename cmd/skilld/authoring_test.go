package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilld/skilld/lint"
	"github.com/skilld/skilld/store/storetest"
)

// runCLIIn runs a command with dir as its working folder, without
// changing the test process's.
func runCLIIn(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), args, &env{stdout: &stdout, stderr: &stderr, dir: dir})
	return code, stdout.String(), stderr.String()
}

// lintJSON runs skilld lint --json and decodes its reports.
func lintJSON(t *testing.T, paths ...string) (int, []lint.Report) {
	t.Helper()
	code, out, errOut := runCLI(t, append([]string{"lint", "--json"}, paths...)...)
	var reports []lint.Report
	if err := json.Unmarshal([]byte(out), &reports); err != nil {
		t.Fatalf("lint --json: exit %d: %v\n%s%s", code, err, out, errOut)
	}
	return code, reports
}

// TestInit: skilld init writes NAME/SKILL.md that skilld validate
// accepts; lint finds nothing in it but the placeholder description, and
// nothing at all with a description given.
func TestInit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	code, out, errOut := runCLIIn(t, dir, "init", "table-export")
	file := filepath.Join(dir, "table-export", "SKILL.md")
	if code != exitOK || !strings.Contains(out, file) || !strings.Contains(errOut, "placeholder") {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"name: table-export\n", "`scripts/`", "`references/`", "`assets/`"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("SKILL.md lacks %q:\n%s", want, data)
		}
	}
	if code, out, _ := runCLI(t, "validate", filepath.Join(dir, "table-export")); code != exitOK || !strings.Contains(out, "1 valid") {
		t.Errorf("validate the scaffold: exit %d\n%s", code, out)
	}
	code, reports := lintJSON(t, filepath.Join(dir, "table-export"))
	if f := reports[0].Findings; code != exitFailure || len(f) != 1 || f[0].Rule != "description-placeholder" {
		t.Errorf("lint the scaffold: exit %d, %+v", code, reports)
	}

	// A description given, quoted as YAML needs: lint has nothing to say.
	desc := "Export Markdown tables: CSV, TSV or JSON Lines. Use when the user asks to export a table."
	if code, out, errOut := runCLIIn(t, dir, "init", "--description", desc, "tables"); code != exitOK || errOut != "" {
		t.Fatalf("init --description: exit %d\n%s%s", code, out, errOut)
	}
	code, reports = lintJSON(t, filepath.Join(dir, "tables"))
	if code != exitOK || len(reports[0].Findings) != 0 {
		t.Errorf("lint a scaffold with a description: exit %d, %+v", code, reports)
	}
	if code, out, _ := runCLI(t, "validate", "--json", filepath.Join(dir, "tables")); code != exitOK || !strings.Contains(out, `"valid": true`) {
		t.Errorf("validate: exit %d\n%s", code, out)
	}
}

// TestInitRefuses: an invalid name or description, or a name already
// taken, is a usage error that creates nothing and changes nothing.
func TestInitRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"taken/keep.txt": "mine", "file-taken": "mine too"})
	for _, args := range [][]string{
		{"init", "Bad_Name"},
		{"init", "--", "-lead"},
		{"init", "trail-"},
		{"init", "two--hyphens"},
		{"init", "a/b"},
		{"init", ".."},
		{"init", " padded"},
		{"init", strings.Repeat("x", 65)},
		{"init", "fine", "--description", strings.Repeat("d", 1025)},
		{"init", "taken"},
		{"init", "file-taken"},
		{"init"},
		{"init", "one", "two"},
	} {
		code, out, errOut := runCLIIn(t, dir, args...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, "skilld init: ") {
			t.Errorf("%q: exit %d\nstdout: %s\nstderr: %s", args, code, out, errOut)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("the folder holds %d entries after refusals, want the 2 it had", len(entries))
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "taken", "keep.txt")); string(data) != "mine" {
		t.Errorf("taken/keep.txt changed: %q", data)
	}
	if _, err := os.Stat(filepath.Join(dir, "taken", "SKILL.md")); err == nil {
		t.Errorf("init wrote into a folder that was there")
	}
	if _, _, errOut := runCLIIn(t, dir, "init", "taken"); !strings.Contains(errOut, "already exists") {
		t.Errorf("refusing a taken name: %s", errOut)
	}
}

// TestLintCommand: exit codes, text, --json and --sarif output of skilld
// lint on the lint package's fixtures, folders and archives.
func TestLintCommand(t *testing.T) {
	t.Parallel()
	fixtures := filepath.Join("..", "..", "lint", "testdata")
	good, bad := filepath.Join(fixtures, "good"), filepath.Join(fixtures, "bad")

	if code, out, _ := runCLI(t, "lint", good); code != exitOK || out != "2 skills linted: 0 errors, 0 warnings, 0 infos\n" {
		t.Errorf("lint the good fixtures: exit %d\n%s", code, out)
	}
	// Warnings fail, with one line a finding naming file, line and rule.
	code, out, _ := runCLI(t, "lint", filepath.Join(bad, "description-short", "SKILL.md"))
	want := filepath.ToSlash(filepath.Join(bad, "description-short")) + "/SKILL.md:3: warning: description is 6 characters, under 40"
	if code != exitFailure || !strings.HasPrefix(out, want) || !strings.Contains(out, "[description-short]\n") || !strings.HasSuffix(out, "1 skill linted: 0 errors, 3 warnings, 0 infos\n") {
		t.Errorf("lint description-short: exit %d\n%s", code, out)
	}
	// Infos do not.
	if code, out, _ := runCLI(t, "lint", filepath.Join(bad, "claude-arguments")); code != exitOK || !strings.Contains(out, ": info: ") {
		t.Errorf("lint an info: exit %d\n%s", code, out)
	}
	// Every fixture at once, as JSON: a report a skill, in order.
	code, reports := lintJSON(t, bad)
	if code != exitFailure || len(reports) != len(lint.Rules()) {
		t.Fatalf("lint --json bad: exit %d, %d reports", code, len(reports))
	}
	for _, r := range reports {
		if len(r.Findings) == 0 || !strings.HasPrefix(r.Path, bad) {
			t.Errorf("report %+v", r)
		}
	}
	// SARIF: one run with every rule.
	code, out, _ = runCLI(t, "lint", "--sarif", bad)
	var log struct {
		Version string `json:"version"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Name  string            `json:"name"`
					Rules []json.RawMessage `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []json.RawMessage `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &log); err != nil || code != exitFailure || log.Version != "2.1.0" || len(log.Runs) != 1 ||
		log.Runs[0].Tool.Driver.Name != "skilld lint" || len(log.Runs[0].Tool.Driver.Rules) != len(lint.Rules()) || len(log.Runs[0].Results) < len(lint.Rules()) {
		t.Errorf("lint --sarif: exit %d, %v\n%.500s", code, err, out)
	}

	// Archives: a skill at the root is located inside the archive, and
	// several skills are linted one by one.
	dir := t.TempDir()
	one := filepath.Join(dir, "one.zip")
	os.WriteFile(one, zipBytes(t, map[string]string{"tables/SKILL.md": "---\nname: tables\ndescription: helper\n---\nExport.\n"}), 0o644)
	if code, out, _ := runCLI(t, "lint", one); code != exitFailure || !strings.Contains(out, "one.zip!/SKILL.md:3: warning:") {
		t.Errorf("lint an archive: exit %d\n%s", code, out)
	}
	several := filepath.Join(dir, "several.zip")
	os.WriteFile(several, zipBytes(t, map[string]string{
		"a/SKILL.md": skillText("a", "Export Markdown tables to CSV files. Use when the user asks to export a table."),
		"b/SKILL.md": skillText("c", "Export Markdown tables to CSV files. Use when the user asks to export a table."),
	}), 0o644)
	code, reports = lintJSON(t, several)
	if code != exitFailure || len(reports) != 2 || reports[0].Path != several+"!/a" || len(reports[0].Findings) != 0 ||
		len(reports[1].Findings) != 1 || reports[1].Findings[0].Rule != "name-folder-mismatch" {
		t.Errorf("lint several skills in an archive: exit %d, %+v", code, reports)
	}

	// A folder without skills is an error finding; usage errors are 2.
	empty := t.TempDir()
	if code, reports := lintJSON(t, empty); code != exitFailure || reports[0].Findings[0].Rule != "skill-invalid" {
		t.Errorf("lint a folder without skills: exit %d, %+v", code, reports)
	}
	for _, args := range [][]string{{"lint"}, {"lint", filepath.Join(dir, "missing")}, {"lint", "--json", "--sarif", good}} {
		if code, _, errOut := runCLI(t, args...); code != exitUsage || !strings.Contains(errOut, "skilld lint: ") {
			t.Errorf("%q: exit %d %s", args, code, errOut)
		}
	}
}

// TestSkillsDiff: skills diff prints a unified diff per changed file
// between two stored versions (changed, added, removed, binary), nothing
// for identical versions, and names a version that does not exist.
func TestSkillsDiff(t *testing.T) {
	for _, d := range storetest.Drivers(t) {
		t.Run(d.Name, func(t *testing.T) { skillsDiffFlow(t, newAPIServer(t, d.Open)) })
	}
}

func skillsDiffFlow(t *testing.T, s *apiServer) {
	dir := t.TempDir()
	v1 := filepath.Join(dir, "v1", "notes")
	writeFiles(t, v1, map[string]string{
		"SKILL.md":          skillText("notes", "Summarize notes."),
		"references/old.md": "# Old\n\nGone in version 2.\n",
		"scripts/run.sh":    "#!/bin/sh\necho same\n",
		"logo.png":          png,
	})
	s.ok(t, s.admin, "default", "skills", "upload", v1)
	v2 := filepath.Join(dir, "v2", "notes")
	writeFiles(t, v2, map[string]string{
		"SKILL.md":          skillText("notes", "Summarize meeting notes."),
		"references/new.md": "# New\n\nAdded in version 2.\n",
		"scripts/run.sh":    "#!/bin/sh\necho same\n",
		"logo.png":          png + "2",
	})
	s.ok(t, s.admin, "default", "skills", "edit", "notes", v2)

	out := s.ok(t, s.admin, "default", "skills", "diff", "notes", "1", "2")
	want := "--- a/notes@1/SKILL.md\n+++ b/notes@2/SKILL.md\n@@ -1,6 +1,6 @@\n ---\n name: notes\n-description: Summarize notes.\n+description: Summarize meeting notes.\n ---\n \n # notes\n" +
		"--- a/notes@1/logo.png\n+++ b/notes@2/logo.png\nBinary files differ\n" +
		"--- /dev/null\n+++ b/notes@2/references/new.md\n@@ -0,0 +1,3 @@\n+# New\n+\n+Added in version 2.\n" +
		"--- a/notes@1/references/old.md\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-# Old\n-\n-Gone in version 2.\n"
	if out != want {
		t.Errorf("diff 1 2:\n%s\nwant:\n%s", out, want)
	}
	// The other way round, and as JSON.
	if out := s.ok(t, s.admin, "default", "skills", "diff", "notes", "2", "1"); !strings.Contains(out, "--- a/notes@2/references/new.md\n+++ /dev/null\n") {
		t.Errorf("diff 2 1:\n%s", out)
	}
	var changes []fileChange
	if err := json.Unmarshal([]byte(s.ok(t, s.admin, "default", "skills", "diff", "notes", "1", "2", "--json")), &changes); err != nil {
		t.Fatal(err)
	}
	if len(changes) != 4 || changes[0].Status != "changed" || !changes[1].Binary || changes[2].Status != "added" || changes[3].Status != "removed" {
		t.Errorf("diff --json: %+v", changes)
	}
	// Identical versions: nothing on stdout, a note on stderr, exit 0.
	if code, out, errOut := s.cli(t, s.admin, "default", "skills", "diff", "notes", "2", "2"); code != exitOK || out != "" || !strings.Contains(errOut, "same files") {
		t.Errorf("diff 2 2: exit %d %q %q", code, out, errOut)
	}
	// A version that does not exist is named.
	if code, out, errOut := s.cli(t, s.admin, "default", "skills", "diff", "notes", "1", "7"); code != exitFailure || out != "" || !strings.Contains(errOut, "version 7 of skill \"notes\" not found") {
		t.Errorf("diff 1 7: exit %d %q %q", code, out, errOut)
	}
	if code, _, errOut := s.cli(t, s.admin, "default", "skills", "diff", "missing", "1", "2"); code != exitFailure || !strings.Contains(errOut, "not_found") {
		t.Errorf("diff of a missing skill: exit %d %q", code, errOut)
	}
	if code, _, errOut := s.cli(t, s.admin, "default", "skills", "diff", "notes", "0", "2"); code != exitUsage || !strings.Contains(errOut, "V1 must be a positive number") {
		t.Errorf("diff 0 2: exit %d %q", code, errOut)
	}
}
