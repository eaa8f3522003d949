package clientdirs

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/skilld/skilld"
)

func TestResolve(t *testing.T) {
	cwd, home := filepath.FromSlash("/work/project"), filepath.FromSlash("/home/ann")
	for _, tc := range []struct {
		spec      string
		scope     Scope
		dir, root string
	}{
		{"claude", Project, "/work/project/.claude/skills", "/work/project"},
		{"agents", Project, "/work/project/.agents/skills", "/work/project"},
		{"codex", Project, "/work/project/.codex/skills", "/work/project"},
		{"copilot", Project, "/work/project/.github/skills", "/work/project"},
		{"gemini", Project, "/work/project/.gemini/skills", "/work/project"},
		{"cursor", Project, "/work/project/.cursor/skills", "/work/project"},
		{"claude", User, "/home/ann/.claude/skills", "/home/ann/.claude"},
		{"agents", User, "/home/ann/.agents/skills", "/home/ann/.agents"},
		{"codex", User, "/home/ann/.codex/skills", "/home/ann/.codex"},
		{"copilot", User, "/home/ann/.copilot/skills", "/home/ann/.copilot"},
		{"gemini", User, "/home/ann/.gemini/skills", "/home/ann/.gemini"},
		{"cursor", User, "/home/ann/.cursor/skills", "/home/ann/.cursor"},
		// A folder inside the project is recorded in the project's lockfile;
		// one outside it, or with --user, in its parent's.
		{"tools/skills", Project, "/work/project/tools/skills", "/work/project"},
		{"./claude", Project, "/work/project/claude", "/work/project"},
		{"../shared/skills", Project, "/work/shared/skills", "/work/shared"},
		{"/opt/skills", Project, "/opt/skills", "/opt"},
		{".", Project, "/work/project", "/work"}, // the project folder itself is not inside it
		{"tools/skills", User, "/work/project/tools/skills", "/work/project/tools"},
	} {
		got, err := Resolve(tc.spec, tc.scope, cwd, home)
		if err != nil {
			t.Errorf("Resolve(%q, %d): %v", tc.spec, tc.scope, err)
			continue
		}
		if got.Dir != filepath.FromSlash(tc.dir) || got.Root != filepath.FromSlash(tc.root) || got.Name != tc.spec {
			t.Errorf("Resolve(%q, %d) = %+v, want dir %s root %s", tc.spec, tc.scope, got, tc.dir, tc.root)
		}
	}
	for _, bad := range []struct {
		spec      string
		scope     Scope
		cwd, home string
	}{
		{"", Project, cwd, home},
		{"claude", Project, "relative", home},
		{"claude", User, cwd, ""},
		{"/", Project, cwd, home},
	} {
		if got, err := Resolve(bad.spec, bad.scope, bad.cwd, bad.home); skilld.ErrorCode(err) != skilld.EINVALID {
			t.Errorf("Resolve(%q, %d, %q, %q) = %+v, %v; want an invalid error", bad.spec, bad.scope, bad.cwd, bad.home, got, err)
		}
	}
}

func TestSplitTargets(t *testing.T) {
	got := SplitTargets([]string{"claude,agents", " codex ", "claude", ",,", "my/skills"})
	if want := []string{"claude", "agents", "codex", "my/skills"}; !slices.Equal(got, want) {
		t.Errorf("SplitTargets = %q, want %q", got, want)
	}
}

func TestGroupByRoot(t *testing.T) {
	cwd, home := filepath.FromSlash("/p"), filepath.FromSlash("/h")
	var ts []Target
	for _, spec := range []string{"claude", "agents", "claude"} {
		tg, err := Resolve(spec, Project, cwd, home)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, tg)
	}
	if g := GroupByRoot(ts); len(g) != 1 || len(g[0]) != 2 {
		t.Errorf("project targets: %d groups %v, want one of two", len(g), g)
	}
	ts = ts[:0]
	for _, spec := range []string{"claude", "agents"} {
		tg, err := Resolve(spec, User, cwd, home)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, tg)
	}
	if g := GroupByRoot(ts); len(g) != 2 || g[0][0].Root != filepath.FromSlash("/h/.claude") || g[1][0].Root != filepath.FromSlash("/h/.agents") {
		t.Errorf("user targets: %v, want one lockfile each, beside their skills folders", g)
	}
}
