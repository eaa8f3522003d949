package pack_test

import (
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
)

func TestCheckPath(t *testing.T) {
	t.Parallel()
	good := []string{
		"SKILL.md",
		"scripts/run.sh",
		".gitignore",
		"a/.hidden/b",
		"notes with spaces.md",
		"café/naïve.md",
		"日本語/ファイル.txt",
		"ab:c", // a colon after the second byte is not a drive
		"1:",   // neither is a digit before it
		"...",  // only "." and ".." are special
		"a..b", // likewise
		"-rf",  // harmless to a path API
		"a/b~", // backup suffix
		"emoji-😀.md",
		strings.Repeat("a", pack.MaxPathLen),
		strings.Repeat("d/", 99) + "f", // depth is a limit, checked by New
	}
	for _, p := range good {
		if err := pack.CheckPath(p); err != nil {
			t.Errorf("CheckPath(%q) = %v, want nil", p, err)
		}
	}
	bad := map[string]string{
		"":                                     "empty",
		"a\xffb":                               "invalid UTF-8",
		"\xc3":                                 "truncated UTF-8",
		`a\b`:                                  "backslash",
		`..\..\evil`:                           "backslash traversal",
		"a\x00b":                               "NUL",
		"a\nb":                                 "newline",
		"a\tb":                                 "tab",
		"a\rb":                                 "carriage return",
		"\x1b[31mred":                          "escape",
		"a\x7fb":                               "DEL",
		"a\u0085b":                             "C1 NEL",
		"a\u009bb":                             "C1 CSI",
		"/etc/passwd":                          "absolute",
		"/":                                    "root",
		"C:":                                   "drive",
		"C:/Windows":                           "drive with path",
		"c:evil":                               "drive-relative",
		"z:x/y":                                "lowercase drive",
		"a//b":                                 "empty segment",
		"a/":                                   "trailing slash",
		"a/b/":                                 "trailing slash deep",
		".":                                    "dot",
		"./a":                                  "leading dot segment",
		"a/./b":                                "inner dot segment",
		"a/.":                                  "trailing dot segment",
		"..":                                   "dotdot",
		"../a":                                 "leading dotdot",
		"a/../b":                               "inner dotdot",
		"a/..":                                 "trailing dotdot",
		"../../evil.sh":                        "zip slip",
		strings.Repeat("a", pack.MaxPathLen+1): "too long",
	}
	for p, rule := range bad {
		err := pack.CheckPath(p)
		assertRefusedNamed(t, rule, err, pack.ErrUnsafePath, skilld.EINVALID)
		if err != nil && !strings.Contains(err.Error(), quoteTrunc(p)) {
			t.Errorf("%s: message %q does not quote the path", rule, err)
		}
	}
}

// quoteTrunc is how the message quotes p (%q), shortened for long paths.
func quoteTrunc(p string) string {
	q := strings.TrimSuffix(strings.TrimPrefix(fmtQ(p), `"`), `"`)
	return q[:min(len(q), 40)]
}

func assertRefusedNamed(t *testing.T, name string, err, sentinel error, code string) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		t.Helper()
		assertRefused(t, err, sentinel, code)
	})
}

func TestNewRejectsCollisions(t *testing.T) {
	t.Parallel()
	nfc := norm.NFC.String("café.md")
	nfd := norm.NFD.String("café.md")
	if nfc == nfd {
		t.Fatal("test needs distinct NFC and NFD forms")
	}
	cases := map[string][]string{
		"duplicate":               {"SKILL.md", "SKILL.md"},
		"case":                    {"Readme.md", "README.md"},
		"case in folder":          {"Docs/a.md", "docs/a.md"},
		"nfc vs nfd":              {nfc, nfd},
		"nfc vs nfd upper":        {nfc, norm.NFD.String("CAFÉ.md")},
		"full folding ß":          {"straße.md", "STRASSE.md"},
		"kelvin sign":             {"\u212aey", "key"},
		"file and folder":         {"a", "a/b"},
		"file and folder folded":  {"A", "a/b"},
		"file and deep folder":    {"x/y", "x/y/z/w"},
		"file and folder nfc/nfd": {nfc, nfd + "/x"},
	}
	for name, paths := range cases {
		var files []pack.File
		for _, p := range paths {
			files = append(files, pack.File{Path: p})
		}
		_, err := pack.New(files, pack.Limits{})
		assertRefusedNamed(t, name, err, pack.ErrPathCollision, skilld.EINVALID)
		if err != nil && !strings.Contains(err.Error(), "collides with") && !strings.Contains(err.Error(), "more than once") {
			t.Errorf("%s: message %q says neither 'collides with' nor 'more than once'", name, err)
		}
	}
	// Near misses that are distinct files everywhere.
	ok := [][]string{
		{"a", "ab/c"},
		{"a.md", "a.md.bak"},
		{"a/b", "a/c"},
		{"resume.md", "résumé.md"},
	}
	for _, paths := range ok {
		var files []pack.File
		for _, p := range paths {
			files = append(files, pack.File{Path: p})
		}
		if _, err := pack.New(files, pack.Limits{}); err != nil {
			t.Errorf("New(%q) = %v", paths, err)
		}
	}
}

func TestNewNamesOffendingPath(t *testing.T) {
	t.Parallel()
	_, err := pack.New([]pack.File{{Path: "ok.md"}, {Path: "../../evil.sh"}}, pack.Limits{})
	assertRefused(t, err, pack.ErrUnsafePath, skilld.EINVALID)
	if !strings.Contains(err.Error(), `"../../evil.sh"`) {
		t.Fatalf("message %q does not name the path", err)
	}
	if d := skilld.ErrorDetails(err); len(d) != 1 || d[0].Field != "../../evil.sh" {
		t.Fatalf("details %+v do not name the path", d)
	}
}

func TestIsSkillMD(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]bool{
		"SKILL.md":       true,
		"skill.md":       true,
		"Skill.MD":       true,
		"sKiLl.Md":       true,
		"a/SKILL.md":     false,
		"SKILL.md/x":     false,
		"SKILL.markdown": false,
		"SKILL":          false,
		"SKILL.md ":      false,
		"\u212aILL.md":   false, // Kelvin sign: folds to k in Unicode, not in ASCII
		"S\u212aILL.md":  false,
		"ſkill.md":       false,
		"":               false,
	} {
		if got := pack.IsSkillMD(p); got != want {
			t.Errorf("IsSkillMD(%q) = %v, want %v", p, got, want)
		}
	}
}
