package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilld/skilld/store/storetest"
)

// cliIn runs a client command as if started in folder dir with home
// directory home (either "" for the process's own).
func (s *apiServer) cliIn(t *testing.T, dir, home, token string, args ...string) (int, string, string) {
	t.Helper()
	full := append(append([]string{}, args...), "--server", s.url, "--token", token, "--workspace", "default")
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), full, &env{stdout: &stdout, stderr: &stderr, dir: dir, home: home})
	return code, stdout.String(), stderr.String()
}

// teamSkills writes 13 valid skills under root (some nested, some with
// scripts and a binary file) and one invalid one, and returns the valid
// names.
func teamSkills(t *testing.T, root string) []string {
	t.Helper()
	var names []string
	for i := 1; i <= 13; i++ {
		name := fmt.Sprintf("skill-%02d", i)
		folder := name
		switch {
		case i%3 == 0:
			folder = ".claude/skills/" + name
		case i%3 == 1:
			folder = "area/" + name
		}
		files := map[string]string{folder + "/SKILL.md": skillText(name, fmt.Sprintf("Skill number %d.", i))}
		if i%2 == 0 {
			files[folder+"/scripts/run.sh"] = "#!/bin/sh\necho " + name + "\n"
		}
		if i == 5 {
			files[folder+"/assets/logo.png"] = "\x89PNG\r\n\x1a\n\x00\x00\x00\x00binary"
		}
		writeFiles(t, root, files)
		names = append(names, name)
	}
	// Its SKILL.md names another folder.
	writeFiles(t, root, map[string]string{"area/broken/SKILL.md": skillText("not-broken", "Invalid because the folder is named otherwise.")})
	return names
}

// TestPushCommand: push stores a tree of 13 skills and names the invalid
// one; pushing again makes no version; --dry-run plans; --prune asks.
func TestPushCommand(t *testing.T) {
	s := newAPIServer(t, storetest.Drivers(t)[0].Open)
	member := strings.TrimSpace(s.ok(t, s.admin, "default", "tokens", "create", "dev", "--role", "member"))
	root := t.TempDir()
	names := teamSkills(t, root)
	broken := filepath.Join(root, "area", "broken")

	code, out, errOut := s.cli(t, member, "default", "push", root)
	if code != exitFailure || !strings.Contains(errOut, "skipped "+broken+": ") || !strings.Contains(errOut, "must match skill name") || strings.Count(errOut, "skipped") != 1 {
		t.Fatalf("first push: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, n := range names {
		if !strings.Contains(out, "created    "+n+"  version 1") {
			t.Errorf("first push does not report %s created:\n%s", n, out)
		}
	}
	if !strings.Contains(out, "13 created, 1 skipped") {
		t.Errorf("first push summary:\n%s", out)
	}
	list := s.okJSON(t, member, "default", "skills", "list", "--page-size", "100")
	if n := int(list["total"].(float64)); n != 13 {
		t.Fatalf("the workspace holds %d skills after the push, want 13", n)
	}
	// The binary file and the exec bit went as they are.
	if files := s.ok(t, member, "default", "skills", "files", "skill-04"); !strings.Contains(files, "scripts/run.sh") || !strings.Contains(files, "  x  ") {
		t.Errorf("skill-04's files:\n%s", files)
	}
	if logo := s.ok(t, member, "default", "skills", "cat", "skill-05", "assets/logo.png"); logo != "\x89PNG\r\n\x1a\n\x00\x00\x00\x00binary" {
		t.Errorf("skill-05's binary file: %q", logo)
	}

	code, out, errOut = s.cli(t, member, "default", "push", root)
	if code != exitFailure || strings.Count(out, "unchanged  ") != 13 || strings.Contains(out, "created") || strings.Contains(out, "edited") || !strings.Contains(errOut, broken) {
		t.Fatalf("second push: exit %d\n%s\n%s", code, out, errOut)
	}
	if v := s.okJSON(t, member, "default", "skills", "get", "skill-07")["version"]; v != 1.0 {
		t.Errorf("skill-07 at version %v after an unchanged push", v)
	}

	// Without the invalid skill, the exit status is 0.
	code, out, errOut = s.cli(t, member, "default", "push", filepath.Join(root, "area"), filepath.Join(root, ".claude"), filepath.Join(root, "skill-02"))
	if code == exitOK {
		t.Fatalf("area/ still holds the broken skill: exit 0\n%s%s", out, errOut)
	}
	writeFiles(t, root, map[string]string{"area/broken/SKILL.md": skillText("broken", "Fixed.")})
	writeFiles(t, root, map[string]string{"skill-02/SKILL.md": skillText("skill-02", "Skill number two, edited.")})

	// --dry-run plans and changes nothing.
	code, out, errOut = s.cli(t, member, "default", "push", root, "--dry-run")
	if code != exitOK || !strings.Contains(out, "create     broken") || !strings.Contains(out, "edit       skill-02  version 2") || strings.Count(out, "unchanged  ") != 12 {
		t.Fatalf("dry run: exit %d\n%s\n%s", code, out, errOut)
	}
	if n := int(s.okJSON(t, member, "default", "skills", "list")["total"].(float64)); n != 13 {
		t.Errorf("a dry run changed the workspace: %d skills", n)
	}
	if v := s.okJSON(t, member, "default", "skills", "get", "skill-02")["version"]; v != 1.0 {
		t.Errorf("a dry run edited skill-02: version %v", v)
	}

	code, out, errOut = s.cli(t, member, "default", "push", root)
	if code != exitOK || !strings.Contains(out, "created    broken  version 1") || !strings.Contains(out, "edited     skill-02  version 2") || errOut != "" {
		t.Fatalf("push with every skill valid: exit %d\n%s\n%s", code, out, errOut)
	}

	// --prune: a skill gone locally is deleted after asking; a GitHub
	// import is never pruned.
	s.ok(t, member, "default", "skills", "import", "https://github.com/o/r/tree/main/skills/y-skill")
	if err := os.RemoveAll(filepath.Join(root, "area", "skill-01")); err != nil {
		t.Fatal(err)
	}
	code, out, _ = s.cli(t, member, "default", "push", root, "--prune", "--dry-run")
	if code != exitOK || !strings.Contains(out, "delete     skill-01  version 1") || strings.Contains(out, "y-skill") {
		t.Errorf("prune dry run: exit %d\n%s", code, out)
	}
	code, _, errOut = s.cli(t, member, "default", "push", root, "--prune")
	if code != exitFailure || !strings.Contains(errOut, "--prune would delete 1 skills (skill-01); pass --yes") {
		t.Errorf("prune from a script without --yes: exit %d\n%s", code, errOut)
	}
	flags := []string{"--server", s.url, "--token", member, "--workspace", "default"}
	code, _, errOut = runAsking(t, "n\n", append([]string{"push", root, "--prune"}, flags...)...)
	if code != exitOK || !strings.Contains(errOut, "delete 1 skills from the workspace that no folder given holds (skill-01)? [y/N]") || !strings.Contains(errOut, "nothing deleted") {
		t.Errorf("answering no: exit %d\n%s", code, errOut)
	}
	s.ok(t, member, "default", "skills", "get", "skill-01")
	code, out, errOut = runAsking(t, "y\n", append([]string{"push", root, "--prune"}, flags...)...)
	if code != exitOK || !strings.Contains(out, "deleted    skill-01") {
		t.Errorf("answering yes: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, _, _ := s.cli(t, member, "default", "skills", "get", "skill-01"); code != exitFailure {
		t.Error("skill-01 survived the prune")
	}
	s.ok(t, member, "default", "skills", "get", "y-skill")

	// Usage errors: no folder, a missing one, no token.
	if code, _, _ := s.cli(t, member, "default", "push"); code != exitUsage {
		t.Errorf("push without a folder: exit %d", code)
	}
	if code, _, errOut := s.cli(t, member, "default", "push", filepath.Join(root, "nope")); code != exitUsage || !strings.Contains(errOut, "does not exist") {
		t.Errorf("push of a missing folder: exit %d %s", code, errOut)
	}
}

// TestPushJSONAndServerRefusals: --json reports every skill; a skill the
// server refuses (a viewer may not create) is skipped with its reason.
func TestPushJSONAndServerRefusals(t *testing.T) {
	s := newAPIServer(t, storetest.Drivers(t)[0].Open)
	viewer := strings.TrimSpace(s.ok(t, s.admin, "default", "tokens", "create", "v", "--role", "viewer"))
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"notes/SKILL.md": skillText("notes", "Notes.")})
	code, _, errOut := s.cli(t, viewer, "default", "push", root)
	if code != exitFailure || !strings.Contains(errOut, "skipped "+filepath.Join(root, "notes")+": ") || !strings.Contains(errOut, "member") {
		t.Errorf("a viewer's push: exit %d\n%s", code, errOut)
	}
	got := s.okJSON(t, s.admin, "default", "push", root)
	items := got["items"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["action"] != "created" || items[0].(map[string]any)["name"] != "notes" {
		t.Errorf("push --json: %v", got)
	}
}
