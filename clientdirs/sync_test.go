package clientdirs

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skilld/skilld/pack"
)

// fakeServer hands out packages by skill and version, counting fetches.
type fakeServer struct {
	t       *testing.T
	pkgs    map[string]*pack.Package // "name@version"
	fetches []string
	fail    map[string]error
	lie     bool // answer another package than asked
}

func (f *fakeServer) add(name string, version int, files map[string]string) Want {
	f.t.Helper()
	p := pkgOf(f.t, files)
	key := name + "@" + string(rune('0'+version))
	f.pkgs[key] = p
	return Want{Name: name, ID: "sk_" + name, Version: version, Digest: p.Digest(), Source: Source{Server: "http://skilld.test", Workspace: "team"}}
}

func (f *fakeServer) fetch(_ context.Context, w Want) (*pack.Package, error) {
	key := w.Name + "@" + string(rune('0'+w.Version))
	f.fetches = append(f.fetches, key)
	if err := f.fail[w.Name]; err != nil {
		return nil, err
	}
	if f.lie {
		return pkgOf(f.t, map[string]string{"SKILL.md": "something else"}), nil
	}
	return f.pkgs[key], nil
}

func newFake(t *testing.T) *fakeServer {
	return &fakeServer{t: t, pkgs: map[string]*pack.Package{}, fail: map[string]error{}}
}

func projectTargets(t *testing.T, root string, specs ...string) []Target {
	t.Helper()
	var out []Target
	for _, s := range specs {
		tg, err := Resolve(s, Project, root, "")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tg)
	}
	return out
}

func outcomes(rs []Result) map[string]Outcome {
	out := map[string]Outcome{}
	for _, r := range rs {
		out[r.Name] = r.Outcome
	}
	return out
}

func mustRun(t *testing.T, s *Sync, want ...Want) []Result {
	t.Helper()
	rs, err := s.Run(t.Context(), want)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// The whole cycle in two targets: write, nothing to do, update, refuse a
// local edit (touching nothing of that skill), force, remove what the
// workspace dropped, and leave alone what skilld did not write.
func TestSync(t *testing.T) {
	root := t.TempDir()
	srv := newFake(t)
	s := &Sync{Root: root, Targets: projectTargets(t, root, "claude", "agents"), Fetch: srv.fetch}
	notes1 := srv.add("notes", 1, map[string]string{"SKILL.md": "notes v1", "scripts/run.sh": "#!/bin/sh\necho 1\n"})
	pdf1 := srv.add("pdf", 1, map[string]string{"SKILL.md": "pdf v1"})
	// A skill of the user's own, not in the lockfile.
	mine := filepath.Join(root, ".claude/skills/mine")
	if err := os.MkdirAll(mine, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mine, "SKILL.md"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}

	rs := mustRun(t, s, notes1, pdf1)
	if got := outcomes(rs); got["notes"] != Written || got["pdf"] != Written {
		t.Fatalf("first sync: %+v", rs)
	}
	if len(srv.fetches) != 2 {
		t.Errorf("fetches %q: one per skill, whatever the number of targets", srv.fetches)
	}
	for _, d := range []string{".claude/skills/notes", ".agents/skills/notes"} {
		if got := tree(t, filepath.Join(root, d)); !maps.Equal(got, map[string]string{"SKILL.md": "notes v1", "scripts/run.sh*": "#!/bin/sh\necho 1\n"}) {
			t.Errorf("%s: %v", d, got)
		}
	}
	lock, exists, err := ReadLockfile(root)
	if err != nil || !exists {
		t.Fatalf("lockfile: %v %v", exists, err)
	}
	if e := lock.Find("notes"); e == nil || e.Digest != notes1.Digest || e.Version != 1 || e.ID != "sk_notes" || e.Source != notes1.Source ||
		!slices.Equal(folders(e), []string{".agents/skills/notes", ".claude/skills/notes"}) {
		t.Errorf("lockfile entry for notes: %+v", e)
	}

	// The same versions again: nothing fetched, nothing written.
	srv.fetches = nil
	rs = mustRun(t, s, notes1, pdf1)
	if got := outcomes(rs); got["notes"] != UpToDate || got["pdf"] != UpToDate || len(srv.fetches) != 0 {
		t.Errorf("second sync: %+v, fetches %q", rs, srv.fetches)
	}

	// A new version of notes, and a local edit of pdf in one target.
	notes2 := srv.add("notes", 2, map[string]string{"SKILL.md": "notes v2"})
	pdf2 := srv.add("pdf", 2, map[string]string{"SKILL.md": "pdf v2"})
	edited := filepath.Join(root, ".agents/skills/pdf/SKILL.md")
	if err := os.WriteFile(edited, []byte("my pdf"), 0o644); err != nil {
		t.Fatal(err)
	}
	rs = mustRun(t, s, notes2, pdf2)
	if got := outcomes(rs); got["notes"] != Written || got["pdf"] != Refused {
		t.Fatalf("sync over an edit: %+v", rs)
	}
	for _, r := range rs {
		if r.Name == "pdf" && (!strings.Contains(r.Reason, ".agents/skills/pdf was edited locally") || !slices.Equal(r.Folders, []string{".agents/skills/pdf"})) {
			t.Errorf("the refusal: %+v", r)
		}
	}
	if got := tree(t, filepath.Join(root, ".agents/skills/pdf")); got["SKILL.md"] != "my pdf" {
		t.Errorf("the edit was not kept: %v", got)
	}
	if got := tree(t, filepath.Join(root, ".claude/skills/pdf")); got["SKILL.md"] != "pdf v1" {
		t.Errorf("the unedited copy of a refused skill changed too: %v", got)
	}
	lock, _, _ = ReadLockfile(root)
	if lock.Find("pdf").Version != 1 || lock.Find("notes").Version != 2 {
		t.Errorf("lockfile after the refusal: pdf %d notes %d, want 1 and 2", lock.Find("pdf").Version, lock.Find("notes").Version)
	}

	s.Force = true
	rs = mustRun(t, s, notes2, pdf2)
	if got := outcomes(rs); got["pdf"] != Written || got["notes"] != UpToDate {
		t.Fatalf("forced sync: %+v", rs)
	}
	for _, d := range []string{".claude/skills/pdf", ".agents/skills/pdf"} {
		if got := tree(t, filepath.Join(root, d)); !maps.Equal(got, map[string]string{"SKILL.md": "pdf v2"}) {
			t.Errorf("%s after --force: %v", d, got)
		}
	}
	s.Force = false

	// pdf is gone from the workspace: removed from both targets, unless
	// edited.
	if err := os.WriteFile(filepath.Join(root, ".claude/skills/pdf/extra.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Skills from another workspace are not the wanted list's to remove.
	s.RemoveGone = &Source{Server: "http://skilld.test", Workspace: "other"}
	if rs := mustRun(t, s, notes2); len(rs) != 1 {
		t.Fatalf("removing what another workspace no longer has: %+v", rs)
	}
	s.RemoveGone = &notes2.Source
	rs = mustRun(t, s, notes2)
	if got := outcomes(rs); got["pdf"] != Refused || !strings.Contains(rs[1].Reason, "no longer has it") {
		t.Fatalf("removing an edited skill: %+v", rs)
	}
	if _, err := os.Stat(filepath.Join(root, ".agents/skills/pdf")); err != nil {
		t.Errorf("a refused removal removed a folder: %v", err)
	}
	os.Remove(filepath.Join(root, ".claude/skills/pdf/extra.md"))
	rs = mustRun(t, s, notes2)
	if got := outcomes(rs); got["pdf"] != Removed {
		t.Fatalf("removing pdf: %+v", rs)
	}
	for _, d := range []string{".claude/skills", ".agents/skills"} {
		if got := names(t, filepath.Join(root, d)); slices.Contains(got, "pdf") {
			t.Errorf("%s still holds pdf: %q", d, got)
		}
	}
	lock, _, _ = ReadLockfile(root)
	if lock.Find("pdf") != nil || len(lock.Skills) != 1 {
		t.Errorf("lockfile after the removal: %+v", lock.Skills)
	}
	if got := tree(t, mine); got["SKILL.md"] != "mine" {
		t.Errorf("the user's own skill changed: %v", got)
	}
}

func folders(s *Skill) []string {
	var out []string
	for _, p := range s.Targets {
		out = append(out, p.Folder)
	}
	slices.Sort(out)
	return out
}

// A folder of the wanted name that skilld did not write is refused unless
// it already holds the wanted files (then it is adopted) or --force.
func TestSyncForeignFolder(t *testing.T) {
	root := t.TempDir()
	srv := newFake(t)
	s := &Sync{Root: root, Targets: projectTargets(t, root, "claude"), Fetch: srv.fetch}
	w := srv.add("notes", 1, map[string]string{"SKILL.md": "notes"})
	dir := filepath.Join(root, ".claude/skills/notes")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("someone else's"), 0o644); err != nil {
		t.Fatal(err)
	}
	rs := mustRun(t, s, w)
	if rs[0].Outcome != Refused || !strings.Contains(rs[0].Reason, "exists and was not written by skilld") {
		t.Fatalf("%+v", rs)
	}
	if lock, _, _ := ReadLockfile(root); lock.Find("notes") != nil {
		t.Error("a refused skill was recorded")
	}
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv.fetches = nil
	rs = mustRun(t, s, w)
	if rs[0].Outcome != UpToDate || len(srv.fetches) != 0 {
		t.Fatalf("the same files: %+v (fetches %q)", rs, srv.fetches)
	}
	if lock, _, _ := ReadLockfile(root); lock.Find("notes") == nil {
		t.Error("an identical folder was not adopted")
	}
}

// A fetch that fails, or answers other files than the digest named, writes
// nothing of the skill and keeps its lockfile entry.
func TestSyncFetchFailures(t *testing.T) {
	root := t.TempDir()
	srv := newFake(t)
	s := &Sync{Root: root, Targets: projectTargets(t, root, "claude", "agents"), Fetch: srv.fetch}
	v1 := srv.add("notes", 1, map[string]string{"SKILL.md": "v1"})
	mustRun(t, s, v1)
	v2 := srv.add("notes", 2, map[string]string{"SKILL.md": "v2"})
	srv.fail["notes"] = errors.New("connection reset")
	rs := mustRun(t, s, v2)
	if rs[0].Outcome != Failed || !strings.Contains(rs[0].Reason, "connection reset") {
		t.Errorf("a failed fetch: %+v", rs)
	}
	delete(srv.fail, "notes")
	srv.lie = true
	rs = mustRun(t, s, v2)
	if rs[0].Outcome != Failed || !strings.Contains(rs[0].Reason, "not "+v2.Digest) {
		t.Errorf("a fetch with the wrong files: %+v", rs)
	}
	for _, d := range []string{".claude/skills/notes", ".agents/skills/notes"} {
		if got := tree(t, filepath.Join(root, d)); !maps.Equal(got, map[string]string{"SKILL.md": "v1"}) {
			t.Errorf("%s after failed syncs: %v", d, got)
		}
	}
	if lock, _, _ := ReadLockfile(root); lock.Find("notes").Version != 1 {
		t.Errorf("lockfile after failed syncs: %+v", lock.Find("notes"))
	}
	// A name that cannot be a folder is refused before anything happens.
	bad := v2
	bad.Name = "../escape"
	if rs := mustRun(t, s, bad); rs[0].Outcome != Failed || len(srv.fetches) != 3 {
		t.Errorf("a name with ..: %+v (fetches %q)", rs, srv.fetches)
	}
}

// Folders recorded in the lockfile keep being updated by a sync that names
// other targets, so that every recorded folder holds the recorded digest.
func TestSyncKeepsRecordedFolders(t *testing.T) {
	root := t.TempDir()
	srv := newFake(t)
	v1 := srv.add("notes", 1, map[string]string{"SKILL.md": "v1"})
	mustRun(t, &Sync{Root: root, Targets: projectTargets(t, root, "claude"), Fetch: srv.fetch}, v1)
	v2 := srv.add("notes", 2, map[string]string{"SKILL.md": "v2"})
	mustRun(t, &Sync{Root: root, Targets: projectTargets(t, root, "gemini"), Fetch: srv.fetch}, v2)
	for _, d := range []string{".claude/skills/notes", ".gemini/skills/notes"} {
		if got := tree(t, filepath.Join(root, d)); got["SKILL.md"] != "v2" {
			t.Errorf("%s: %v", d, got)
		}
	}
	lock, _, _ := ReadLockfile(root)
	if got := folders(lock.Find("notes")); !slices.Equal(got, []string{".claude/skills/notes", ".gemini/skills/notes"}) {
		t.Errorf("recorded folders: %q", got)
	}
	// A target recorded in another lockfile is refused.
	user, err := Resolve("claude", User, root, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&Sync{Root: root, Targets: []Target{user}, Fetch: srv.fetch}).Run(t.Context(), nil); err == nil {
		t.Error("a target of another lockfile was accepted")
	}
}
