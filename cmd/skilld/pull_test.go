package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skilld/skilld/clientdirs"
	"github.com/skilld/skilld/internal/testtree"
	"github.com/skilld/skilld/store/storetest"
)

func readTree(t *testing.T, dir string) map[string]string { return testtree.Read(t, dir) }

func readLock(t *testing.T, root string) *clientdirs.Lockfile {
	t.Helper()
	l, exists, err := clientdirs.ReadLockfile(root)
	if err != nil || !exists {
		t.Fatalf("lockfile in %s: exists %v, %v", root, exists, err)
	}
	return l
}

// TestPullSyncCommands: the workspace's skills go into .claude/skills and
// .agents/skills of a project with a lockfile; a local edit is refused by
// sync and restored by sync --force; sync --locked in a fresh folder
// writes the locked versions byte for byte, although the workspace moved
// on; a skill deleted in the workspace leaves the folders on sync.
func TestPullSyncCommands(t *testing.T) {
	s := newAPIServer(t, storetest.Drivers(t)[0].Open)
	member := strings.TrimSpace(s.ok(t, s.admin, "default", "tokens", "create", "dev", "--role", "member"))
	src := t.TempDir()
	names := teamSkills(t, src)
	if err := os.RemoveAll(filepath.Join(src, "area", "broken")); err != nil {
		t.Fatal(err)
	}
	s.ok(t, member, "default", "push", src)
	// Where each skill's files are in src.
	srcDir := map[string]string{}
	for _, n := range names {
		for _, d := range []string{n, "area/" + n, ".claude/skills/" + n} {
			if _, err := os.Stat(filepath.Join(src, d)); err == nil {
				srcDir[n] = filepath.Join(src, d)
			}
		}
	}

	project := t.TempDir()
	code, out, errOut := s.cliIn(t, project, "", member, "pull", "--target", "claude,agents")
	if code != exitOK || strings.Count(out, "written    ") != 13 {
		t.Fatalf("pull: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, n := range names {
		want := readTree(t, srcDir[n])
		for _, target := range []string{".claude/skills", ".agents/skills"} {
			if got := readTree(t, filepath.Join(project, target, n)); !maps.Equal(got, want) {
				t.Errorf("%s/%s differs from the pushed folder:\n%v\nwant %v", target, n, got, want)
			}
		}
	}
	lock := readLock(t, project)
	if len(lock.Skills) != 13 {
		t.Fatalf("the lockfile names %d skills", len(lock.Skills))
	}
	e := lock.Find("skill-04")
	sk := s.okJSON(t, member, "default", "skills", "get", "skill-04")
	if e.ID != sk["id"] || e.Version != 1 || e.Digest != sk["digest"] || e.Source.Server != s.url || e.Source.Workspace != "default" ||
		len(e.Targets) != 2 || e.Targets[0] != (clientdirs.Placement{Target: "agents", Folder: ".agents/skills/skill-04"}) {
		t.Errorf("lockfile entry of skill-04: %+v (skill %v)", e, sk)
	}

	// A second pull has nothing to write.
	if code, out, _ := s.cliIn(t, project, "", member, "pull", "--target", "claude", "--target", "agents"); code != exitOK || strings.Count(out, "up to date ") != 13 {
		t.Errorf("pull again: exit %d\n%s", code, out)
	}

	// A local edit: sync refuses to touch that skill, in either folder;
	// --force restores the stored files.
	edited := filepath.Join(project, ".agents/skills/skill-04/SKILL.md")
	if err := os.WriteFile(edited, []byte("my own version\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = s.cliIn(t, project, "", member, "sync", "--target", "agents")
	if code != exitFailure || !strings.Contains(errOut, "refused skill-04: .agents/skills/skill-04 was edited locally (pass --force to replace)") ||
		strings.Count(out, "up to date ") != 12 {
		t.Fatalf("sync over a local edit: exit %d\n%s\n%s", code, out, errOut)
	}
	if data, _ := os.ReadFile(edited); string(data) != "my own version\n" {
		t.Errorf("the local edit was overwritten: %q", data)
	}
	code, out, errOut = s.cliIn(t, project, "", member, "sync", "--target", "agents", "--force")
	if code != exitOK || !strings.Contains(out, "written    skill-04  version 1  .agents/skills/skill-04") {
		t.Fatalf("sync --force: exit %d\n%s\n%s", code, out, errOut)
	}
	if got := readTree(t, filepath.Join(project, ".agents/skills/skill-04")); !maps.Equal(got, readTree(t, srcDir["skill-04"])) {
		t.Errorf(".agents/skills/skill-04 after --force: %v", got)
	}

	// Edited again, while the workspace has a new version: still refused,
	// in both folders; --force brings the new version to both.
	if err := os.WriteFile(edited, []byte("my own version\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, src, map[string]string{"area/skill-04/SKILL.md": skillText("skill-04", "Version two.")})
	s.ok(t, member, "default", "push", src)
	code, out, errOut = s.cliIn(t, project, "", member, "sync")
	if code != exitFailure || !strings.Contains(errOut, "refused skill-04: .agents/skills/skill-04 was edited locally") {
		t.Fatalf("sync over a local edit and a new version: exit %d\n%s\n%s", code, out, errOut)
	}
	if data, _ := os.ReadFile(edited); string(data) != "my own version\n" {
		t.Errorf("the local edit was overwritten: %q", data)
	}
	if got := readTree(t, filepath.Join(project, ".claude/skills/skill-04")); got["SKILL.md"] == skillText("skill-04", "Version two.") {
		t.Error("the unedited copy of the refused skill was updated")
	}
	if readLock(t, project).Find("skill-04").Version != 1 {
		t.Error("the refused skill's lockfile entry moved on")
	}
	code, out, errOut = s.cliIn(t, project, "", member, "sync", "--force")
	if code != exitOK || !strings.Contains(out, "written    skill-04  version 2  .agents/skills/skill-04, .claude/skills/skill-04") {
		t.Fatalf("sync --force: exit %d\n%s\n%s", code, out, errOut)
	}
	want4 := readTree(t, filepath.Join(src, "area/skill-04"))
	for _, target := range []string{".claude/skills", ".agents/skills"} {
		if got := readTree(t, filepath.Join(project, target, "skill-04")); !maps.Equal(got, want4) {
			t.Errorf("%s/skill-04 after --force: %v", target, got)
		}
	}

	// The lockfile reproduces the tree elsewhere, byte for byte, at its
	// versions, while the workspace is at newer ones.
	before := map[string]map[string]string{}
	for _, target := range []string{".claude", ".agents"} {
		before[target] = readTree(t, filepath.Join(project, target))
	}
	lockBytes, err := os.ReadFile(filepath.Join(project, clientdirs.LockfileName))
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, src, map[string]string{"skill-08/SKILL.md": skillText("skill-08", "Newer than the lockfile.")})
	s.ok(t, member, "default", "push", src)
	for _, target := range []string{".claude", ".agents"} {
		if err := os.RemoveAll(filepath.Join(project, target)); err != nil {
			t.Fatal(err)
		}
	}
	fresh := t.TempDir()
	if err := os.WriteFile(filepath.Join(fresh, clientdirs.LockfileName), lockBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{fresh, project} {
		code, out, errOut = s.cliIn(t, dir, "", member, "sync", "--locked")
		if code != exitOK || strings.Count(out, "written    ") != 13 {
			t.Fatalf("sync --locked in %s: exit %d\n%s\n%s", dir, code, out, errOut)
		}
		for _, target := range []string{".claude", ".agents"} {
			if got := readTree(t, filepath.Join(dir, target)); !maps.Equal(got, before[target]) {
				t.Errorf("sync --locked: %s/%s differs from what was pulled", dir, target)
			}
		}
		if got, _ := os.ReadFile(filepath.Join(dir, clientdirs.LockfileName)); string(got) != string(lockBytes) {
			t.Errorf("sync --locked changed the lockfile:\n%s", got)
		}
	}
	// --locked into another target than the lockfile's adds that folder.
	if code, out, errOut := s.cliIn(t, fresh, "", member, "sync", "--locked", "--target", "gemini"); code != exitOK || strings.Count(out, "written    ") != 13 {
		t.Errorf("sync --locked --target gemini: exit %d\n%s\n%s", code, out, errOut)
	}
	if got := readTree(t, filepath.Join(fresh, ".gemini/skills/skill-04")); !maps.Equal(got, want4) {
		t.Errorf(".gemini/skills/skill-04: %v", got)
	}

	// A lockfile whose digest the server does not have writes nothing of
	// that skill.
	var l clientdirs.Lockfile
	if err := json.Unmarshal(lockBytes, &l); err != nil {
		t.Fatal(err)
	}
	l.Find("skill-08").Digest = "sha256:" + strings.Repeat("0", 64)
	tampered, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	third := t.TempDir()
	if err := os.WriteFile(filepath.Join(third, clientdirs.LockfileName), tampered, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = s.cliIn(t, third, "", member, "sync", "--locked")
	if code != exitFailure || !strings.Contains(errOut, "failed skill-08: version 1 of skill-08 is sha256:") {
		t.Errorf("sync --locked with a wrong digest: exit %d\n%s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(third, ".claude/skills/skill-08")); !os.IsNotExist(err) {
		t.Errorf("a skill with a wrong digest was written: %v", err)
	}

	// A skill deleted in the workspace goes from the folders on sync,
	// not on pull; the user's own skills stay.
	writeFiles(t, project, map[string]string{".claude/skills/mine/SKILL.md": skillText("mine", "Not from skilld.")})
	s.ok(t, member, "default", "skills", "delete", "skill-13")
	if code, out, _ := s.cliIn(t, project, "", member, "pull"); code != exitOK || strings.Contains(out, "removed") {
		t.Errorf("pull after a delete: exit %d\n%s", code, out)
	}
	code, out, errOut = s.cliIn(t, project, "", member, "sync")
	if code != exitOK || !strings.Contains(out, "removed    skill-13  .agents/skills/skill-13, .claude/skills/skill-13") {
		t.Fatalf("sync after a delete: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(project, ".claude/skills/skill-13")); !os.IsNotExist(err) {
		t.Errorf("skill-13 is still there: %v", err)
	}
	if readLock(t, project).Find("skill-13") != nil {
		t.Error("skill-13 is still in the lockfile")
	}
	if got := readTree(t, filepath.Join(project, ".claude/skills/mine")); len(got) != 1 {
		t.Errorf("the user's own skill: %v", got)
	}

	// Usage errors.
	if code, _, errOut := s.cliIn(t, t.TempDir(), "", member, "pull"); code != exitUsage || !strings.Contains(errOut, "no --target") {
		t.Errorf("pull with neither --target nor a lockfile: exit %d %s", code, errOut)
	}
	if code, _, _ := s.cliIn(t, project, "", member, "sync", "--locked", "skill-01"); code != exitUsage {
		t.Errorf("sync --locked NAME: exit %d", code)
	}
	if code, _, _ := s.cliIn(t, project, "", member, "pull", "--locked"); code != exitUsage {
		t.Errorf("pull --locked: exit %d", code)
	}
}

// TestPullSelections: named skills (pinned with @N), an agent's skills at
// its pins, the user's home folders with their own lockfiles, and other
// targets.
func TestPullSelections(t *testing.T) {
	s := newAPIServer(t, storetest.Drivers(t)[0].Open)
	src := t.TempDir()
	writeFiles(t, src, map[string]string{
		"alpha/SKILL.md": skillText("alpha", "Alpha one."), "beta/SKILL.md": skillText("beta", "Beta."), "gamma/SKILL.md": skillText("gamma", "Gamma."),
	})
	s.ok(t, s.admin, "default", "push", src)
	writeFiles(t, src, map[string]string{"alpha/SKILL.md": skillText("alpha", "Alpha two.")})
	s.ok(t, s.admin, "default", "push", src)

	project := t.TempDir()
	code, out, errOut := s.cliIn(t, project, "", s.admin, "pull", "alpha@1", "beta", "--target", "codex,copilot,cursor,tools/skills")
	if code != exitOK || !strings.Contains(out, "written    alpha  version 1") || !strings.Contains(out, "written    beta  version 1") || strings.Contains(out, "gamma") {
		t.Fatalf("pull alpha@1 beta: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, d := range []string{".codex/skills", ".github/skills", ".cursor/skills", "tools/skills"} {
		if got := readTree(t, filepath.Join(project, d, "alpha")); got["SKILL.md"] != skillText("alpha", "Alpha one.") {
			t.Errorf("%s/alpha: %v", d, got)
		}
	}

	s.ok(t, s.admin, "default", "agents", "create", "bot", "--model", "test:m", "--skill", "alpha@1", "--skill", "gamma")
	home := t.TempDir()
	code, out, errOut = s.cliIn(t, project, home, s.admin, "pull", "--agent", "bot", "--user", "--target", "claude,gemini")
	if code != exitOK || !strings.Contains(out, "written    alpha  version 1") || !strings.Contains(out, "written    gamma  version 1") || strings.Contains(out, "beta") {
		t.Fatalf("pull --agent bot --user: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, d := range []string{".claude", ".gemini"} {
		if got := readTree(t, filepath.Join(home, d, "skills/gamma")); got["SKILL.md"] != skillText("gamma", "Gamma.") {
			t.Errorf("~/%s/skills/gamma: %v", d, got)
		}
		l := readLock(t, filepath.Join(home, d))
		if e := l.Find("alpha"); e == nil || e.Targets[0].Folder != "skills/alpha" {
			t.Errorf("~/%s/skills.lock.json: %+v", d, l.Skills)
		}
	}
	if _, err := os.Stat(filepath.Join(home, clientdirs.LockfileName)); !os.IsNotExist(err) {
		t.Errorf("a lockfile in the home folder itself: %v", err)
	}
	// sync --user finds those lockfiles; the unpinned gamma follows the
	// workspace, the pinned alpha stays at 1.
	writeFiles(t, src, map[string]string{"gamma/SKILL.md": skillText("gamma", "Gamma two.")})
	s.ok(t, s.admin, "default", "push", src)
	code, out, errOut = s.cliIn(t, project, home, s.admin, "sync", "--user", "--agent", "bot")
	if code != exitOK || strings.Count(out, "written    gamma  version 2") != 2 || strings.Count(out, "up to date alpha  version 1") != 2 {
		t.Fatalf("sync --user --agent bot: exit %d\n%s\n%s", code, out, errOut)
	}
	entries, _ := os.ReadDir(filepath.Join(home, ".claude/skills"))
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if !slices.Equal(got, []string{"alpha", "gamma"}) {
		t.Errorf("~/.claude/skills holds %q, want no leftovers", got)
	}

	// --json: one document with every skill's outcome.
	code, out, errOut = s.cliIn(t, project, "", s.admin, "pull", "beta", "gamma", "--target", "claude", "--json")
	var report struct {
		Items []struct {
			Name, Outcome, Lockfile string
			Version                 int
			Folders                 []string
		}
	}
	if err := json.Unmarshal([]byte(out), &report); code != exitOK || err != nil || len(report.Items) != 2 {
		t.Fatalf("pull --json: exit %d, %v\n%s\n%s", code, err, out, errOut)
	}
	if it := report.Items[1]; it.Name != "gamma" || it.Outcome != "written" || it.Version != 2 || it.Lockfile != filepath.Join(project, clientdirs.LockfileName) ||
		!slices.Equal(it.Folders, []string{".claude/skills/gamma"}) {
		t.Errorf("pull --json, gamma: %+v", it)
	}
}
