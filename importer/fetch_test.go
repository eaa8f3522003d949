package importer_test

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/importer"
	"github.com/skilld/skilld/importer/githubtest"
	"github.com/skilld/skilld/pack"
)

// standardRepo is a repository that is a skill at its root and holds two
// more, one of them with a SKILL.md example of its own.
func standardRepo() []file {
	return []file{
		{Name: ".github/workflows/ci.yml", Data: "on: push\n"},
		{Name: "README.md", Data: "# r\n"},
		{Name: "SKILL.md", Data: githubtest.SkillMD("r")},
		{Name: "skills/a/SKILL.md", Data: githubtest.SkillMD("a")},
		{Name: "skills/a/examples/SKILL.md", Data: githubtest.SkillMD("example")},
		{Name: "skills/a/examples/demo.md", Data: "demo\n"},
		{Name: "skills/a/scripts/run.sh", Data: "#!/bin/sh\necho a\n", Mode: 0o775},
		{Name: "skills/b/references/api.md", Data: "api\n"},
		{Name: "skills/b/skill.md", Data: githubtest.SkillMD("b")},
	}
}

func fetch(t *testing.T, f *fakeGitHub, rawURL string) ([]importer.Candidate, string, error) {
	t.Helper()
	src, err := importer.ParseGitHubURL(rawURL)
	if err != nil {
		t.Fatalf("ParseGitHubURL(%q): %v", rawURL, err)
	}
	return f.client("").Fetch(context.Background(), src)
}

func mustFetch(t *testing.T, f *fakeGitHub, rawURL string) ([]importer.Candidate, string) {
	t.Helper()
	cands, ref, err := fetch(t, f, rawURL)
	if err != nil {
		t.Fatalf("Fetch(%s): %v", rawURL, err)
	}
	return cands, ref
}

func candPaths(cands []importer.Candidate) []string {
	var s []string
	for _, c := range cands {
		s = append(s, c.Path)
	}
	return s
}

func pkgPaths(p *pack.Package) []string {
	var s []string
	for _, f := range p.Files() {
		s = append(s, f.Path)
	}
	return s
}

// wantErr checks the code, a sentinel when given, and words of the message.
func wantErr(t *testing.T, err error, code string, sentinel error, words ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want %s", code)
	}
	if got := skilld.ErrorCode(err); got != code {
		t.Fatalf("error %q has code %q, want %q", err, got, code)
	}
	if sentinel != nil && !errors.Is(err, sentinel) {
		t.Fatalf("error %q does not wrap %v", err, sentinel)
	}
	for _, w := range words {
		if !strings.Contains(skilld.ErrorMessage(err), w) {
			t.Fatalf("message %q does not mention %q", skilld.ErrorMessage(err), w)
		}
	}
}

func TestFetchWholeRepository(t *testing.T) {
	t.Parallel()
	f := newFakeGitHub(t)
	f.DefaultBranch = "trunk"
	f.Archives["trunk"] = repoArchive(standardRepo()...)
	cands, ref := mustFetch(t, f, "https://github.com/o/r")
	if ref != "trunk" {
		t.Fatalf("resolved ref %q, want the default branch trunk", ref)
	}
	if got, want := candPaths(cands), []string{"", "skills/a", "skills/b"}; !slices.Equal(got, want) {
		t.Fatalf("candidates %q, want %q (the nested example is part of skills/a)", got, want)
	}
	want := []struct {
		name, url string
		files     []string
	}{
		{"r", "https://github.com/o/r/tree/trunk", []string{".github/workflows/ci.yml", "README.md", "SKILL.md"}},
		{"a", "https://github.com/o/r/tree/trunk/skills/a", []string{"SKILL.md", "examples/SKILL.md", "examples/demo.md", "scripts/run.sh"}},
		{"b", "https://github.com/o/r/tree/trunk/skills/b", []string{"references/api.md", "skill.md"}},
	}
	for i, c := range cands {
		if c.Name != want[i].name || c.SourceURL != want[i].url {
			t.Errorf("candidate %d: name %q url %q, want %q %q", i, c.Name, c.SourceURL, want[i].name, want[i].url)
		}
		if got := pkgPaths(c.Package); !slices.Equal(got, want[i].files) {
			t.Errorf("candidate %q files %q, want %q", c.Path, got, want[i].files)
		}
	}
	// Exec bits come from the archive's modes.
	for _, fl := range cands[1].Package.Files() {
		if fl.Exec != (fl.Path == "scripts/run.sh") {
			t.Errorf("%s: exec %v", fl.Path, fl.Exec)
		}
	}
	if f.RepoCalls != 1 || f.TarballCalls != 1 {
		t.Errorf("%d repository and %d tarball requests, want 1 each", f.RepoCalls, f.TarballCalls)
	}
}

func TestFetchDefaultBranchFallsBackToMain(t *testing.T) {
	t.Parallel()
	f := newFakeGitHub(t)
	f.Archives["main"] = repoArchive(file{Name: "SKILL.md", Data: githubtest.SkillMD("r")})
	f.RepoHook = func(w http.ResponseWriter, r *http.Request, n int) bool {
		writeJSON(w, http.StatusInternalServerError, map[string]any{"message": "Server Error"})
		return true
	}
	cands, ref := mustFetch(t, f, "https://github.com/o/r")
	if ref != "main" || len(cands) != 1 || cands[0].Name != "r" {
		t.Fatalf("ref %q, candidates %+v; want main and the root skill", ref, cands)
	}
	if f.RepoCalls != 3 {
		t.Fatalf("%d repository requests, want 3 (two retries)", f.RepoCalls)
	}
}

func TestFetchSelectsFolders(t *testing.T) {
	t.Parallel()
	f := newFakeGitHub(t)
	f.Archives["v1.2"] = repoArchive(standardRepo()...)
	cases := []struct {
		url   string
		want  []string
		files int // of the first candidate
	}{
		{"https://github.com/o/r/tree/v1.2", []string{"", "skills/a", "skills/b"}, 3},
		{"https://github.com/o/r/tree/v1.2/skills/a", []string{"skills/a"}, 4},
		{"https://github.com/o/r/tree/v1.2/skills/a/examples", []string{"skills/a/examples"}, 2},
		{"https://github.com/o/r/tree/v1.2/skills", []string{"skills/a", "skills/b"}, 4},
		{"https://github.com/o/r/blob/v1.2/skills/b/skill.md", []string{"skills/b"}, 2},
		{"https://github.com/o/r/blob/v1.2/SKILL.md", []string{""}, 3},
	}
	for _, c := range cases {
		cands, ref := mustFetch(t, f, c.url)
		if ref != "v1.2" {
			t.Errorf("%s: ref %q", c.url, ref)
		}
		if got := candPaths(cands); !slices.Equal(got, c.want) {
			t.Errorf("%s: candidates %q, want %q", c.url, got, c.want)
		} else if n := cands[0].Package.Len(); n != c.files {
			t.Errorf("%s: first candidate has %d files, want %d", c.url, n, c.files)
		}
	}
	if f.RepoCalls != 0 {
		t.Errorf("an explicit ref still asked for the default branch (%d requests)", f.RepoCalls)
	}
	// import_all over a tree URL to the skills/ folder.
	src, _ := importer.ParseGitHubURL("https://github.com/o/r/tree/v1.2/skills")
	got, _, err := f.client("").Import(context.Background(), src, "", true)
	if err != nil || !slices.Equal(candPaths(got), []string{"skills/a", "skills/b"}) {
		t.Fatalf("Import all of skills/: %q, %v", candPaths(got), err)
	}
}

func TestFetchRefWithSlash(t *testing.T) {
	t.Parallel()
	f := newFakeGitHub(t)
	f.DefaultBranch = "release/v2"
	f.Archives["release/v2"] = repoArchive(file{Name: "pdf/SKILL.md", Data: githubtest.SkillMD("pdf")})
	cands, ref := mustFetch(t, f, "https://github.com/o/r")
	if ref != "release/v2" || len(cands) != 1 || cands[0].SourceURL != "https://github.com/o/r/tree/release/v2/pdf" {
		t.Fatalf("ref %q, candidates %+v", ref, cands)
	}
	// Set directly, as an API caller with a separate ref field would.
	src := importer.Source{Owner: "o", Repo: "r", Ref: "release/v2", Path: "pdf", Kind: importer.KindTree}
	if _, _, err := f.client("").Fetch(context.Background(), src); err != nil {
		t.Fatal(err)
	}
	src.Ref = "release//v2"
	_, _, err := f.client("").Fetch(context.Background(), src)
	wantErr(t, err, skilld.EINVALID, nil, "ref")
}

func TestFetchMissingFolders(t *testing.T) {
	t.Parallel()
	f := newFakeGitHub(t)
	f.Archives["main"] = repoArchive(standardRepo()...)
	_, _, err := fetch(t, f, "https://github.com/o/r/tree/main/skills/zzz")
	wantErr(t, err, skilld.ENOTFOUND, nil, `"skills/zzz"`, "not found", "o/r")
	_, _, err = fetch(t, f, "https://github.com/o/r/tree/main/skills/a/scripts")
	wantErr(t, err, skilld.ENOTFOUND, nil, `"skills/a/scripts"`, `part of the skill folder "skills/a"`)
	_, _, err = fetch(t, f, "https://github.com/o/r/blob/main/skills/zzz/SKILL.md")
	wantErr(t, err, skilld.ENOTFOUND, nil, `"skills/zzz"`)
	_, _, err = fetch(t, f, "https://github.com/o/r/tree/no-such-branch")
	wantErr(t, err, skilld.ENOTFOUND, nil, "o/r", `"no-such-branch"`)

	// Hidden folders are where agents read skills from (openai/skills keeps
	// them under .curated/ and .system/); version control and node_modules
	// are not searched.
	f.Archives["hidden"] = repoArchive(file{Name: "README.md"}, file{Name: ".claude/skills/x/SKILL.md", Data: githubtest.SkillMD("x")},
		file{Name: ".curated/y/SKILL.md", Data: githubtest.SkillMD("y")})
	cands, _ := mustFetch(t, f, "https://github.com/o/r/tree/hidden")
	if !slices.Equal(candPaths(cands), []string{".claude/skills/x", ".curated/y"}) {
		t.Fatalf("skills in hidden folders: %q", candPaths(cands))
	}
	f.Archives["empty"] = repoArchive(file{Name: "README.md"}, file{Name: "node_modules/pkg/skills/x/SKILL.md", Data: githubtest.SkillMD("x")})
	_, _, err = fetch(t, f, "https://github.com/o/r/tree/empty")
	wantErr(t, err, skilld.ENOTFOUND, nil, "no SKILL.md", "1 SKILL.md file(s) in version-control or node_modules folders")
	cands, _ = mustFetch(t, f, "https://github.com/o/r/tree/empty/node_modules/pkg/skills")
	if !slices.Equal(candPaths(cands), []string{"node_modules/pkg/skills/x"}) {
		t.Fatalf("a tree URL into node_modules: %q", candPaths(cands))
	}
}

func TestFetchLinks(t *testing.T) {
	t.Parallel()
	f := newFakeGitHub(t)
	f.Archives["main"] = repoArchive(
		file{Name: "docs/latest", Type: tar.TypeSymlink, Link: "v2"},
		file{Name: "docs/v2/index.md", Data: "docs\n"},
		file{Name: "skills/a/SKILL.md", Data: githubtest.SkillMD("a")},
		file{Name: "skills/b/SKILL.md", Data: githubtest.SkillMD("b")},
		file{Name: "skills/b/secrets", Type: tar.TypeSymlink, Link: "/etc/passwd"},
	)
	_, _, err := fetch(t, f, "https://github.com/o/r/tree/main/skills/a")
	if err != nil {
		t.Fatalf("a symlink outside the skill failed the import: %v", err)
	}
	_, _, err = fetch(t, f, "https://github.com/o/r/tree/main/skills/b")
	wantErr(t, err, skilld.EINVALID, pack.ErrUnsupportedEntry, `skill folder "skills/b"`, "secrets", "symbolic link")
	// Fetch reads every candidate, so the whole repository fails too...
	_, _, err = fetch(t, f, "https://github.com/o/r")
	wantErr(t, err, skilld.EINVALID, pack.ErrUnsupportedEntry, "skills/b")
	// ...but Import reads only the chosen one.
	src, _ := importer.ParseGitHubURL("https://github.com/o/r")
	cands, _, err := f.client("").Import(context.Background(), src, "a", false)
	if err != nil || len(cands) != 1 || cands[0].Package == nil {
		t.Fatalf("Import of skill a beside a broken skill b: %+v, %v", cands, err)
	}
}

func TestFetchSkillTooManyFiles(t *testing.T) {
	t.Parallel()
	files := []file{{Name: "skills/ok/SKILL.md", Data: githubtest.SkillMD("ok")}, {Name: "skills/big/SKILL.md", Data: githubtest.SkillMD("big")}}
	for i := range pack.GitHubMaxFiles {
		files = append(files, file{Name: fmt.Sprintf("skills/big/data/%03d.txt", i), Data: "x"})
	}
	f := newFakeGitHub(t)
	f.Archives["main"] = repoArchive(files...)
	_, _, err := fetch(t, f, "https://github.com/o/r/tree/main/skills")
	wantErr(t, err, skilld.ETOOLARGE, pack.ErrTooManyFiles, `"skills/big"`, "200 files")
	// Exactly at the limit is fine.
	f.Archives["at-limit"] = repoArchive(files[:len(files)-1]...)
	cands, _ := mustFetch(t, f, "https://github.com/o/r/tree/at-limit/skills/big")
	if cands[0].Package.Len() != pack.GitHubMaxFiles {
		t.Fatalf("%d files", cands[0].Package.Len())
	}
}

func TestFetchTooManyCandidates(t *testing.T) {
	t.Parallel()
	var files []file
	for i := range importer.MaxCandidates + 1 {
		files = append(files, file{Name: fmt.Sprintf("s/skill-%02d/SKILL.md", i), Data: githubtest.SkillMD(fmt.Sprintf("skill-%02d", i))})
	}
	f := newFakeGitHub(t)
	f.Archives["main"] = repoArchive(files...)
	f.Archives["fifty"] = repoArchive(files[1:]...)
	_, _, err := fetch(t, f, "https://github.com/o/r/tree/main")
	wantErr(t, err, skilld.ETOOLARGE, nil, "51 skill folders", "50")
	cands, _ := mustFetch(t, f, "https://github.com/o/r/tree/fifty")
	if len(cands) != importer.MaxCandidates {
		t.Fatalf("%d candidates, want %d", len(cands), importer.MaxCandidates)
	}
}

func TestFetchRefusesBadArchives(t *testing.T) {
	t.Parallel()
	f := newFakeGitHub(t)
	f.Archives["text"] = []byte("<html>not an archive</html>")
	f.Archives["flat"] = gzipped(t, tarOf(t, "SKILL.md", githubtest.SkillMD("flat")))
	f.Archives["dotdot"] = repoArchive(file{Name: "a/../../escape/SKILL.md", Data: githubtest.SkillMD("escape")})
	_, _, err := fetch(t, f, "https://github.com/o/r/tree/text")
	wantErr(t, err, skilld.EINVALID, pack.ErrBadArchive, "o/r", "gzip")
	_, _, err = fetch(t, f, "https://github.com/o/r/tree/flat")
	wantErr(t, err, skilld.EINVALID, pack.ErrBadArchive, "o/r", "top folder")
	_, _, err = fetch(t, f, "https://github.com/o/r/tree/dotdot")
	wantErr(t, err, skilld.EINVALID, pack.ErrUnsafePath, "o/r", "..")
}

func TestFetchSkillTooLarge(t *testing.T) {
	t.Parallel()
	rng := rand.NewChaCha8([32]byte{2})
	big := make([]byte, pack.GitHubMaxPackageSize/2+1)
	_, _ = rng.Read(big)
	f := newFakeGitHub(t)
	f.Archives["main"] = githubtest.ArchiveLevel("o", "r", gzip.NoCompression,
		file{Name: "skills/big/SKILL.md", Data: githubtest.SkillMD("big")},
		file{Name: "skills/big/a.bin", Data: string(big)},
		file{Name: "skills/big/b.bin", Data: string(big)},
	)
	_, _, err := fetch(t, f, "https://github.com/o/r")
	wantErr(t, err, skilld.ETOOLARGE, pack.ErrTooLarge, `"skills/big"`, "10485760-byte (10 MiB)")
}
