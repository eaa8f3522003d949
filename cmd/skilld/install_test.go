package main

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilld/skilld/store/storetest"
)

// gitRepo makes a git repository of files with one commit on branch main
// and a tag v1, then a second commit on main; it returns its folder.
func gitRepo(t *testing.T, files, later map[string]string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("installing from a git URL needs git: %v", err)
	}
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=test", "-c", "user.email=test@example.com", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	git("init", "-q")
	writeFiles(t, dir, files)
	git("add", "-A")
	git("commit", "-q", "-m", "skills")
	git("tag", "v1")
	writeFiles(t, dir, later)
	git("add", "-A")
	git("commit", "-q", "-m", "more")
	return dir
}

// TestInstallCommand: install from a git repository (file:// URL, at a
// tag and at the default branch) pushes the skills found and, with
// --sync, writes them into a project; from OWNER/REPO/PATH it is the
// server's GitHub import; from a folder it is a push.
func TestInstallCommand(t *testing.T) {
	s := newAPIServer(t, storetest.Drivers(t)[0].Open)
	member := strings.TrimSpace(s.ok(t, s.admin, "default", "tokens", "create", "dev", "--role", "member"))
	repo := gitRepo(t, map[string]string{
		"skills/lint/SKILL.md":        skillText("lint", "Lint the code."),
		"skills/lint/scripts/lint.sh": "#!/bin/sh\necho lint\n",
		"docs/deploy/SKILL.md":        skillText("deploy", "Deploy it."),
		"README.md":                   "not a skill\n",
	}, map[string]string{"skills/lint/SKILL.md": skillText("lint", "Lint the code, better.")})
	url := "file://" + filepath.ToSlash(repo)

	project := t.TempDir()
	code, out, errOut := s.cliIn(t, project, "", member, "install", url+"@v1", "--sync", "--target", "claude")
	if code != exitOK || !strings.Contains(out, "created    lint  version 1  "+url+":skills/lint") || !strings.Contains(out, "created    deploy  version 1") ||
		!strings.Contains(out, "written    lint  version 1  .claude/skills/lint") {
		t.Fatalf("install %s@v1 --sync: exit %d\n%s\n%s", url, code, out, errOut)
	}
	want := map[string]string{"SKILL.md": skillText("lint", "Lint the code."), "scripts/lint.sh*": "#!/bin/sh\necho lint\n"}
	if got := readTree(t, filepath.Join(project, ".claude/skills/lint")); !maps.Equal(got, want) {
		t.Errorf(".claude/skills/lint: %v", got)
	}
	if files := s.ok(t, member, "default", "skills", "files", "lint"); strings.Contains(files, ".git") {
		t.Errorf("the clone's .git went into the skill:\n%s", files)
	}
	if l := readLock(t, project); l.Find("lint") == nil || l.Find("deploy") == nil {
		t.Errorf("lockfile after install --sync: %+v", l.Skills)
	}

	// The default branch is newer: lint gets version 2, deploy is unchanged.
	code, out, errOut = s.cliIn(t, project, "", member, "install", url, "--sync")
	if code != exitOK || !strings.Contains(out, "edited     lint  version 2") || !strings.Contains(out, "unchanged  deploy  version 1") ||
		!strings.Contains(out, "written    lint  version 2  .claude/skills/lint") {
		t.Fatalf("install %s: exit %d\n%s\n%s", url, code, out, errOut)
	}
	// A path ending in .git is cloned too (a bare repository here).
	bare := filepath.Join(t.TempDir(), "skills.git")
	if out, err := exec.Command("git", "clone", "-q", "--bare", repo, bare).CombinedOutput(); err != nil {
		t.Fatalf("git clone --bare: %v\n%s", err, out)
	}
	if code, out, errOut := s.cliIn(t, project, "", member, "install", bare); code != exitOK || strings.Count(out, "unchanged  ") != 2 {
		t.Errorf("install %s: exit %d\n%s\n%s", bare, code, out, errOut)
	}
	if code, _, errOut := s.cliIn(t, project, "", member, "install", url+"@no-such-branch"); code != exitFailure || !strings.Contains(errOut, "git clone") {
		t.Errorf("install at a missing branch: exit %d\n%s", code, errOut)
	}

	// OWNER/REPO/PATH: the server imports it from (fake) GitHub.
	code, out, errOut = s.cliIn(t, project, "", member, "install", "o/r/skills/x-skill", "--sync", "--target", "agents")
	if code != exitOK || !strings.Contains(out, "installed  x-skill  version 1  https://github.com/o/r/tree/main/skills/x-skill") ||
		!strings.Contains(out, "written    x-skill  version 1  .agents/skills/x-skill") {
		t.Fatalf("install o/r/skills/x-skill: exit %d\n%s\n%s", code, out, errOut)
	}
	if got := readTree(t, filepath.Join(project, ".agents/skills/x-skill")); got["scripts/a.sh*"] != "#!/bin/sh\necho a\n" {
		t.Errorf(".agents/skills/x-skill: %v", got)
	}
	// With @REF, every skill under the folder.
	if code, out, errOut := s.cliIn(t, project, "", member, "install", "o/r/skills@main"); code != exitFailure || !strings.Contains(errOut, "x-skill") {
		t.Errorf("install o/r/skills@main over an installed x-skill: exit %d\n%s\n%s", code, out, errOut)
	}

	// A local folder is pushed.
	local := t.TempDir()
	writeFiles(t, local, map[string]string{"notes/SKILL.md": skillText("notes", "Notes.")})
	if code, out, errOut := s.cliIn(t, project, "", member, "install", local); code != exitOK || !strings.Contains(out, "created    notes  version 1") {
		t.Errorf("install %s: exit %d\n%s\n%s", local, code, out, errOut)
	}

	for _, bad := range [][]string{
		{"install", "not-a-source"},
		{"install", local + "@v1"},
		{"install", url, "--target", "claude"},
		{"install", url + "@v1", "--ref", "v2"},
	} {
		if code, _, errOut := s.cliIn(t, project, "", member, bad...); code != exitUsage {
			t.Errorf("skilld %s: exit %d\n%s", strings.Join(bad, " "), code, errOut)
		}
	}
}
