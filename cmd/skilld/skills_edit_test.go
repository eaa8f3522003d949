package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilld/skilld/store/storetest"
)

// png is a file no inline edit can carry.
const png = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe"

// TestSkillsEdit: 'skills edit' makes new versions of a skill with binary
// files, from an archive or a folder, and makes none when nothing changed.
func TestSkillsEdit(t *testing.T) {
	for _, d := range storetest.Drivers(t) {
		t.Run(d.Name, func(t *testing.T) { skillsEditFlow(t, newAPIServer(t, d.Open)) })
	}
}

func skillsEditFlow(t *testing.T, s *apiServer) {
	member := s.admin
	dir := t.TempDir()
	charts := filepath.Join(dir, "charts")
	writeFiles(t, charts, map[string]string{"SKILL.md": skillText("charts", "Draw charts."), "logo.png": png})
	s.ok(t, member, "default", "skills", "upload", charts)

	// An archive file: version 2, its binary file served back.
	v2zip := filepath.Join(dir, "charts-v2.zip")
	os.WriteFile(v2zip, zipBytes(t, map[string]string{"charts/SKILL.md": skillText("charts", "Draw charts, v2."), "charts/logo.png": png + "2"}), 0o644)
	code, out, errOut := s.cli(t, member, "default", "skills", "edit", "charts", v2zip, "--message", "new logo", "--expected-version", "1")
	if code != exitOK || !strings.Contains(errOut, "uploading a new version of charts") || !strings.Contains(out, "Draw charts, v2.") {
		t.Fatalf("edit with an archive: exit %d\n%s%s", code, out, errOut)
	}
	if out := s.ok(t, member, "default", "skills", "versions", "charts"); !strings.Contains(out, "new logo") {
		t.Errorf("versions after the archive edit:\n%s", out)
	}
	if got := s.ok(t, member, "default", "skills", "cat", "charts", "logo.png"); got != png+"2" {
		t.Errorf("logo.png of version 2: %q", got)
	}
	if v := s.okJSON(t, member, "default", "skills", "get", "charts"); v["version"] != 2.0 || v["description"] != "Draw charts, v2." {
		t.Errorf("after the archive edit: %v", v)
	}
	// The same archive again: no version, and the output says so.
	code, out, _ = s.cli(t, member, "default", "skills", "edit", "charts", v2zip)
	if code != exitOK || !strings.Contains(out, "unchanged") || !strings.Contains(out, "the same as version 2") {
		t.Errorf("the same archive again: exit %d\n%s", code, out)
	}
	// A folder with a binary file is zipped on the way (its folder name
	// need not be the skill's, as for an inline edit).
	work := filepath.Join(dir, "work-copy")
	writeFiles(t, work, map[string]string{"SKILL.md": skillText("charts", "Draw charts, v3."), "logo.png": png + "3", "scripts/draw.sh": "#!/bin/sh\necho draw\n"})
	if v := s.okJSON(t, member, "default", "skills", "edit", "charts", work); v["version"] != 3.0 || v["unchanged"] != nil {
		t.Errorf("edit with a folder holding a binary file: %v", v)
	}
	if v := s.okJSON(t, member, "default", "skills", "edit", "charts", work); v["version"] != 3.0 || v["unchanged"] != true {
		t.Errorf("the same folder again: %v", v)
	}
	// Deeper than inline edits go (10 folders): sent as an archive too.
	deep := filepath.Join(dir, "deep")
	writeFiles(t, deep, map[string]string{"SKILL.md": skillText("charts", "Draw charts, v3."), "logo.png": png + "3", "scripts/draw.sh": "#!/bin/sh\necho draw\n",
		strings.Repeat("d/", 11) + "note.md": "deep"})
	if v := s.okJSON(t, member, "default", "skills", "edit", "charts", deep); v["version"] != 4.0 {
		t.Errorf("edit with a deep folder: %v", v)
	}
	if v := s.okJSON(t, member, "default", "skills", "edit", "charts", work); v["version"] != 5.0 || v["unchanged"] != nil {
		t.Errorf("back to the work copy: %v", v)
	}
	// Binary files named one by one cannot go inline: say what to send.
	t.Chdir(work) // files named one by one are taken relative to the current folder
	code, _, errOut = s.cli(t, member, "default", "skills", "edit", "charts", "SKILL.md", "logo.png")
	if code != exitUsage || !strings.Contains(errOut, "give the skill's folder, or an archive of it, instead") {
		t.Errorf("edit with a binary file named: exit %d %s", code, errOut)
	}
	files := s.ok(t, member, "default", "skills", "files", "charts")
	if !strings.Contains(files, "scripts/draw.sh") || !strings.Contains(files, "logo.png") {
		t.Errorf("files of version 3:\n%s", files)
	}
	// An archive of another skill is refused, saying what to do.
	other := filepath.Join(dir, "pdf.zip")
	os.WriteFile(other, zipBytes(t, map[string]string{"pdf/SKILL.md": skillText("pdf", "PDFs."), "pdf/x.png": png}), 0o644)
	code, _, errOut = s.cli(t, member, "default", "skills", "edit", "charts", other)
	if code != exitFailure || !strings.Contains(errOut, `the archive holds the skill "pdf", not "charts"`) || !strings.Contains(errOut, "name=charts") {
		t.Errorf("another skill's archive: exit %d %s", code, errOut)
	}
	// … and taken with --name keeping the skill's name.
	if v := s.okJSON(t, member, "default", "skills", "edit", "charts", other, "--name", "charts"); v["version"] != 6.0 || v["name"] != "charts" {
		t.Errorf("with --name: %v", v)
	}
	// An identical text edit makes no version either.
	notes := filepath.Join(dir, "notes")
	writeFiles(t, notes, map[string]string{"SKILL.md": skillText("notes", "Notes.")})
	s.ok(t, member, "default", "skills", "create", notes)
	if v := s.okJSON(t, member, "default", "skills", "edit", "notes", notes); v["unchanged"] != true || v["version"] != 1.0 {
		t.Errorf("identical text edit: %v", v)
	}
	if code, _, errOut := s.cli(t, member, "default", "skills", "edit", "charts", filepath.Join(dir, "missing.zip")); code != exitFailure || !strings.Contains(errOut, "missing.zip") {
		t.Errorf("a missing archive: exit %d %s", code, errOut)
	}
	if code, _, errOut := s.cli(t, member, "default", "skills", "restore", "charts", "99"); code != exitFailure ||
		!strings.Contains(errOut, `version 99 of skill "charts" not found (it has 6 versions)`) {
		t.Errorf("restore of a missing version: exit %d %s", code, errOut)
	}

	// A folder of several skills is refused naming them.
	many := filepath.Join(dir, "many")
	writeFiles(t, many, map[string]string{"a/SKILL.md": skillText("a", "A."), "b/SKILL.md": skillText("b", "B.")})
	code, _, errOut = s.cli(t, member, "default", "skills", "create", many)
	if code != exitFailure || !strings.Contains(errOut, "the files hold 2 skills (a, b), not one at its root") {
		t.Errorf("create from a folder of skills: exit %d %s", code, errOut)
	}
	code, _, errOut = s.cli(t, member, "default", "skills", "upload", many)
	if code != exitFailure || !strings.Contains(errOut, "the archive holds 2 skills (a, b), not one at its root") {
		t.Errorf("upload of a folder of skills: exit %d %s", code, errOut)
	}

	// Updating an install to the version it has changes nothing.
	s.ok(t, s.admin, "default", "catalog", "create-registry", "acme", "--trust", "community")
	lint := filepath.Join(dir, "lint")
	writeFiles(t, lint, map[string]string{"SKILL.md": skillText("lint", "Lint.")})
	s.ok(t, s.admin, "default", "catalog", "publish", "acme", lint)
	s.ok(t, member, "default", "skills", "install", "acme/lint")
	if out := s.ok(t, s.admin, "default", "skills", "update", "lint"); !strings.Contains(out, "unchanged") {
		t.Errorf("update to the installed version:\n%s", out)
	}
}

// TestValidateSeveral: validate checks each skill of an archive holding
// several, as it does for a folder; a path that does not exist is a usage
// error; pack names the skills it cannot choose between.
func TestValidateSeveral(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bundle := filepath.Join(dir, "bundle.zip")
	os.WriteFile(bundle, zipBytes(t, map[string]string{
		"skills/a/SKILL.md":    "---\nname: a\ndescription: A.\n---\n",
		"skills/b/SKILL.md":    "---\nname: b\ndescription: B.\n---\n",
		"skills/c/SKILL.md":    "---\nname: wrong\ndescription: C.\n---\n",
		"skills/d/SKILL.md":    "---\nname: d\ndescription: D.\n---\n",
		"skills/d/run.sh":      "#!/bin/sh\n",
		"skills/README.md":     "four skills",
		"skills/a/ex/SKILL.md": "an example, part of a",
	}), 0o644)
	code, out, _ := runCLI(t, "validate", "--json", bundle)
	rs := decodeValidations(t, out)
	if code != exitFailure || len(rs) != 4 {
		t.Fatalf("validate of an archive of 4 skills: exit %d, %d results\n%s", code, len(rs), out)
	}
	for i, want := range []string{"a", "b", "c", "d"} {
		if rs[i].Path != bundle+":"+want {
			t.Errorf("result %d path %q", i, rs[i].Path)
		}
		if valid := want != "c"; rs[i].Valid != valid {
			t.Errorf("%s: valid %v: %+v", want, rs[i].Valid, rs[i])
		}
	}
	if !strings.Contains(rs[2].Errors[0].Message, "must match") {
		t.Errorf("c is checked against its folder's name: %+v", rs[2].Errors)
	}
	// Its digest is that of the skill's own folder.
	folder := filepath.Join(dir, "d")
	writeFiles(t, folder, map[string]string{"SKILL.md": "---\nname: d\ndescription: D.\n---\n", "run.sh": "#!/bin/sh\n"})
	os.Chmod(filepath.Join(folder, "run.sh"), 0o644) // zipBytes stores no exec bits
	_, packed, _ := runCLI(t, "pack", folder)
	if !strings.HasPrefix(packed, rs[3].Digest+"\n") {
		t.Errorf("digest of d in the archive %s, of its folder:\n%s", rs[3].Digest, packed)
	}
	code, out, _ = runCLI(t, "validate", bundle)
	if code != exitFailure || !strings.Contains(out, "4 skills checked: 3 valid, 1 invalid") {
		t.Errorf("text output: exit %d\n%s", code, out)
	}

	// A path that does not exist is a usage error naming it.
	missing := filepath.Join(dir, "nonexistent")
	code, _, errOut := runCLI(t, "validate", missing)
	if code != exitUsage || !strings.Contains(errOut, missing+" does not exist") {
		t.Errorf("validate of a missing path: exit %d %s", code, errOut)
	}
	code, _, errOut = runCLI(t, "validate", filepath.Join(examples, "csv-inspector"), missing)
	if code != exitUsage || !strings.Contains(errOut, missing) {
		t.Errorf("validate with one missing path: exit %d %s", code, errOut)
	}
	code, _, errOut = runCLI(t, "pack", missing)
	if code != exitUsage || !strings.Contains(errOut, missing+" does not exist") {
		t.Errorf("pack of a missing path: exit %d %s", code, errOut)
	}

	// pack names the skills of a folder, and of an archive, of several.
	tree := filepath.Join(dir, "tree")
	writeFiles(t, tree, map[string]string{"x/SKILL.md": "---\nname: x\ndescription: X.\n---\n", "y/z/SKILL.md": "---\nname: z\ndescription: Z.\n---\n"})
	code, _, errOut = runCLI(t, "pack", tree)
	if code != exitFailure || !strings.Contains(errOut, tree+" holds 2 skills (x, y/z), not one at its root; name one of them (skilld pack "+filepath.Join(tree, "x")+")") {
		t.Errorf("pack of a folder of skills: exit %d %s", code, errOut)
	}
	code, _, errOut = runCLI(t, "pack", bundle)
	if code != exitFailure || !strings.Contains(errOut, bundle+" holds 4 skills (a, b, c, d), not one at its root") {
		t.Errorf("pack of an archive of skills: exit %d %s", code, errOut)
	}
}
