package importer_test

import (
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/importer"
)

func TestParseGitHubURLAccepts(t *testing.T) {
	t.Parallel()
	repo := importer.Source{Owner: "anthropics", Repo: "skills", Kind: importer.KindRepo}
	tree := func(ref, path string) importer.Source {
		return importer.Source{Owner: "anthropics", Repo: "skills", Ref: ref, Path: path, Kind: importer.KindTree}
	}
	blob := func(ref, path string) importer.Source {
		return importer.Source{Owner: "anthropics", Repo: "skills", Ref: ref, Path: path, Kind: importer.KindBlob}
	}
	cases := []struct {
		url  string
		want importer.Source
	}{
		{"https://github.com/anthropics/skills", repo},
		{"https://github.com/anthropics/skills/", repo},
		{"https://github.com/anthropics/skills.git", repo},
		{"https://github.com/anthropics/skills.git/", repo},
		{"http://github.com/anthropics/skills", repo},
		{"https://www.github.com/anthropics/skills", repo},
		{"HTTPS://GitHub.com/anthropics/skills", repo},
		{"  https://github.com/anthropics/skills  ", repo},
		{"https://github.com/anthropics/skills?tab=readme-ov-file", repo},
		{"https://github.com/anthropics/skills#readme", repo},
		{"git@github.com:anthropics/skills.git", repo},
		{"git@github.com:anthropics/skills", repo},
		{"https://github.com/anthropics/skills/tree/main", tree("main", "")},
		{"https://github.com/anthropics/skills/tree/main/", tree("main", "")},
		{"https://github.com/anthropics/skills/tree/main/document-skills/pdf", tree("main", "document-skills/pdf")},
		{"https://github.com/anthropics/skills/tree/main/document-skills/pdf/", tree("main", "document-skills/pdf")},
		{"https://github.com/anthropics/skills/tree/v1.2.3/skills", tree("v1.2.3", "skills")},
		{"https://github.com/anthropics/skills/tree/4f3c2b1a09f8e7d6c5b4a3928170f6e5d4c3b2a1/x", tree("4f3c2b1a09f8e7d6c5b4a3928170f6e5d4c3b2a1", "x")},
		{"https://github.com/anthropics/skills/tree/main/my%20skill", tree("main", "my skill")},
		{"https://github.com/anthropics/skills/tree/main/.claude/skills", tree("main", ".claude/skills")},
		{"https://github.com/anthropics/skills/blob/main/pdf/SKILL.md", blob("main", "pdf")},
		{"https://github.com/anthropics/skills/blob/main/pdf/skill.md", blob("main", "pdf")},
		{"https://github.com/anthropics/skills/blob/main/a/b/Skill.MD?plain=1#L3", blob("main", "a/b")},
		{"https://github.com/anthropics/skills/blob/dev/SKILL.md", blob("dev", "")},
	}
	for _, c := range cases {
		got, err := importer.ParseGitHubURL(c.url)
		if err != nil {
			t.Errorf("ParseGitHubURL(%q): %v", c.url, err)
			continue
		}
		c.want.URL = c.url
		if got != c.want {
			t.Errorf("ParseGitHubURL(%q) = %+v, want %+v", c.url, got, c.want)
		}
	}
	// Owner and repository characters GitHub allows.
	for _, u := range []string{"https://github.com/a-b/c.d_e-f", "https://github.com/A1/R", "https://github.com/emu_corp/x",
		"https://github.com/" + strings.Repeat("o", 39) + "/" + strings.Repeat("r", 100)} {
		if _, err := importer.ParseGitHubURL(u); err != nil {
			t.Errorf("ParseGitHubURL(%q): %v", u, err)
		}
	}
}

func TestParseGitHubURLRefuses(t *testing.T) {
	t.Parallel()
	cases := []struct{ url, why string }{
		{"", "empty"},
		{"   ", "empty"},
		{"github.com/o/r", "only github.com URLs"},
		{"https://gitlab.com/o/r", `not "gitlab.com"`},
		{"https://github.com.evil.com/o/r", "only github.com URLs"},
		{"https://gist.github.com/o/abc", "only github.com URLs"},
		{"https://raw.githubusercontent.com/o/r/main/SKILL.md", "only github.com URLs"},
		{"ftp://github.com/o/r", "only github.com URLs"},
		{"https://user:pw@github.com/o/r", "plain github.com"},
		{"https://github.com:8443/o/r", "plain github.com"},
		{"https://github.com", "repository is missing"},
		{"https://github.com/", "repository is missing"},
		{"https://github.com/o", "repository is missing"},
		{"https://github.com/o/r/issues", "/issues pages"},
		{"https://github.com/o/r/pulls/3", "/pulls pages"},
		{"https://github.com/o/r/releases/tag/v1", "/releases pages"},
		{"https://github.com/o/r/archive/refs/heads/main.zip", "/archive pages"},
		{"https://github.com/o/r/tree", "needs a branch"},
		{"https://github.com/o/r/tree/", "needs a branch"},
		{"https://github.com/o/r/blob/main", "must point at a SKILL.md"},
		{"https://github.com/o/r/blob/main/README.md", "must point at a SKILL.md"},
		{"https://github.com/o/r/blob/main/docs/", "must point at a SKILL.md"},
		{"https://github.com/o/r/tree/main/a/../b", `".." segment`},
		{"https://github.com/o/r/tree/main/a/%2e%2e/b", `".." segment`},
		{"https://github.com/o/r/tree/main/a/./b", `"." segment`},
		{"https://github.com/o/r/tree/main//a", "empty segment"},
		{"https://github.com//r", "empty segment"},
		{"https://github.com/o/r/tree/feature%2Fx/a", "encoded-slash"},
		{"https://github.com/o/r/tree/main/a%5Cb", "backslash"},
		{"https://github.com/o/r/tree/main/a%00b", "NUL"},
		{"https://github.com/o/r/tree/ma~in", "not a valid branch"},
		{"https://github.com/o/r/tree/a..b", "not a valid branch"},
		{"https://github.com/o/r/tree/x.lock", "not a valid branch"},
		{"https://github.com/o/r/tree/-x", "not a valid branch"},
		{"https://github.com/o/r/tree/a%20b", "not a valid branch"},
		{"https://github.com/o/r?ref=dev", `"ref" is not supported`},
		{"https://github.com/o/r/tree/main?path=x", `"path" is not supported`},
		{"https://github.com/o/r?%zz", "malformed"},
		{"https://github.com/-o/r", "not a valid GitHub owner"},
		{"https://github.com/o.o/r", "not a valid GitHub owner"},
		{"https://github.com/" + strings.Repeat("o", 40) + "/r", "not a valid GitHub owner"},
		{"https://github.com/orgs/acme", "not a valid GitHub owner"},
		{"https://github.com/settings/profile", "not a valid GitHub owner"},
		{"https://github.com/o/r$", "not a valid GitHub repository"},
		{"https://github.com/o/..", "not a valid GitHub repository"},
		{"https://github.com/o/" + strings.Repeat("r", 101), "not a valid GitHub repository"},
		{"https://github.com/o/r%2Fx", "encoded-slash"},
		{"git@github.com:o/r/tree/main", "SSH URL names only a repository"},
		{"git@github.com:o", "SSH URL names only a repository"},
		{"git@gitlab.com:o/r.git", "not a valid github.com URL"},
		{"ssh://git@github.com/o/r.git", "only github.com"},
		{"https://github.com/o/r\x00", "not a valid github.com URL"},
	}
	for _, c := range cases {
		_, err := importer.ParseGitHubURL(c.url)
		if err == nil {
			t.Errorf("ParseGitHubURL(%q) accepted", c.url)
			continue
		}
		msg := skilld.ErrorMessage(err)
		if skilld.ErrorCode(err) != skilld.EINVALID || !strings.Contains(msg, c.why) || !strings.Contains(msg, "expected https://github.com/OWNER/REPO") {
			t.Errorf("ParseGitHubURL(%q): %s %q; want invalid mentioning %q and the expected forms", c.url, skilld.ErrorCode(err), msg, c.why)
		}
	}
}
