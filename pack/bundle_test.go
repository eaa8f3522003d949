package pack_test

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
)

func TestAssemble(t *testing.T) {
	t.Parallel()
	text := []byte("---\nname: stored\ndescription: stored text\n---\n")

	t.Run("packaged SKILL.md wins", func(t *testing.T) {
		t.Parallel()
		for _, name := range []string{"SKILL.md", "skill.md", "Skill.MD"} {
			p := mustNew(t, []pack.File{{Path: name, Data: []byte("packaged")}, {Path: "a.txt"}}, pack.Limits{})
			got, err := pack.Assemble(p, text)
			if err != nil {
				t.Fatal(err)
			}
			if got != p {
				t.Errorf("%s: Assemble returned a new package", name)
			}
			if f, _ := got.File(name); string(f.Data) != "packaged" {
				t.Errorf("%s: content %q", name, f.Data)
			}
		}
	})

	t.Run("stored text added", func(t *testing.T) {
		t.Parallel()
		p := mustNew(t, []pack.File{{Path: "scripts/run.sh", Data: []byte("x"), Exec: true}, {Path: "docs/SKILL.md"}}, pack.Limits{})
		before := p.Digest()
		got, err := pack.Assemble(p, text)
		if err != nil {
			t.Fatal(err)
		}
		checkPackage(t, got, pack.Limits{})
		f, ok := got.File("SKILL.md")
		if !ok || string(f.Data) != string(text) || f.Exec {
			t.Fatalf("SKILL.md = %+v, %v", f, ok)
		}
		if got.Len() != 3 || got.Digest() == before || p.Digest() != before || p.Len() != 2 {
			t.Fatalf("bundle %d files %s; input %d files %s (was %s)", got.Len(), got.Digest(), p.Len(), p.Digest(), before)
		}
		// Deterministic: the same inputs give the same bundle.
		again, _ := pack.Assemble(p, text)
		if again.Digest() != got.Digest() {
			t.Fatal("Assemble is not deterministic")
		}
	})

	t.Run("nil text gives an empty SKILL.md", func(t *testing.T) {
		t.Parallel()
		got, err := pack.Assemble(mustNew(t, nil, pack.Limits{}), nil)
		if err != nil {
			t.Fatal(err)
		}
		if f, ok := got.File("SKILL.md"); !ok || len(f.Data) != 0 || got.Len() != 1 {
			t.Fatalf("got %+v %v", f, ok)
		}
	})

	t.Run("no extra limits", func(t *testing.T) {
		t.Parallel()
		lim := pack.InlineLimits()
		files := make([]pack.File, lim.MaxFiles)
		for i := range files {
			files[i] = pack.File{Path: "f" + strings.Repeat("x", i)}
		}
		got, err := pack.Assemble(mustNew(t, files, lim), text)
		if err != nil || got.Len() != lim.MaxFiles+1 {
			t.Fatalf("Assemble at the file limit: %v", err)
		}
	})

	t.Run("top folder kept", func(t *testing.T) {
		t.Parallel()
		p, err := readZipBytes(t, buildZip(t, zipFile{Name: "top/a.md", Data: []byte("a")}))
		if err != nil {
			t.Fatal(err)
		}
		got, err := pack.Assemble(p, text)
		if err != nil || got.TopDir() != "top" {
			t.Fatalf("TopDir %q, %v", got.TopDir(), err)
		}
	})

	t.Run("folder named like SKILL.md", func(t *testing.T) {
		t.Parallel()
		p := mustNew(t, []pack.File{{Path: "skill.md/x"}}, pack.Limits{})
		_, err := pack.Assemble(p, text)
		assertRefused(t, err, pack.ErrPathCollision, skilld.EINVALID)
	})
}

func TestSandboxDir(t *testing.T) {
	t.Parallel()
	hash8 := func(id string) string {
		s := sha256.Sum256([]byte(id))
		return hex.EncodeToString(s[:])[:8]
	}
	cases := []struct{ name, id, slug string }{
		{"Deploy API", "id-1", "deploy-api"},
		{"deploy_api", "id-2", "deploy-api"},
		{"  --Deploy   API!!  ", "id-3", "deploy-api"},
		{"!!!", "id-4", "skill"},
		{"???", "id-5", "skill"},
		{"", "id-6", "skill"},
		{"😀🎉", "id-7", "skill"},
		{"Café Ünïcode", "id-8", "café-ünïcode"},
		{norm.NFD.String("Café Ünïcode"), "id-9", "café-ünïcode"},
		{"日本語のスキル", "id-10", "日本語のスキル"},
		{"İstanbul", "id-11", "istanbul"}, // strings.ToLower uses the simple mapping
		{"../../etc/passwd", "id-12", "etc-passwd"},
		{"a\\b\x00c\nd", "id-13", "a-b-c-d"},
		{"v2.0 (beta)", "id-14", "v2-0-beta"},
		{"ΣΊΣΥΦΟΣ", "id-15", "σίσυφοσ"}, // no final-sigma context: stable, if not pretty
		{strings.Repeat("ab ", 40), "id-16", strings.TrimSuffix(strings.Repeat("ab-", 22), "-")[:64]},
		{strings.Repeat("é", 100), "id-17", strings.Repeat("é", 64)},
		{"नमस्ते दुनिया", "id-18", "नमस्ते-दुनिया"}, // vowel signs and virama stay with their letters
		{"\u0301abc", "id-19", "abc"}, // a mark with no letter before it is dropped
	}
	seen := map[string]string{}
	valid := regexp.MustCompile(`^skills/[\p{L}\p{N}][\p{L}\p{N}\p{M}]*(-[\p{L}\p{N}][\p{L}\p{N}\p{M}]*)*-[0-9a-f]{8}$`)
	for _, c := range cases {
		got := pack.SandboxDir(c.name, c.id)
		want := "skills/" + c.slug + "-" + hash8(c.id)
		if got != want {
			t.Errorf("SandboxDir(%q, %q) = %q, want %q", c.name, c.id, got, want)
		}
		if err := pack.CheckPath(got); err != nil {
			t.Errorf("SandboxDir(%q) = %q fails CheckPath: %v", c.name, got, err)
		}
		if !valid.MatchString(got) {
			t.Errorf("SandboxDir(%q) = %q has an unexpected shape", c.name, got)
		}
		slug := strings.TrimSuffix(strings.TrimPrefix(got, "skills/"), "-"+hash8(c.id))
		if n := utf8.RuneCountInString(slug); n > 64 {
			t.Errorf("slug %q has %d runes", slug, n)
		}
		if other, ok := seen[got]; ok {
			t.Errorf("%q and %q share %q", c.name, other, got)
		}
		seen[got] = c.name
		if again := pack.SandboxDir(c.name, c.id); again != got {
			t.Errorf("SandboxDir(%q) not stable: %q then %q", c.name, got, again)
		}
	}
	if pack.SandboxDir("Deploy API", "same") != pack.SandboxDir("deploy_api", "same") {
		t.Error("same id and slug should give the same dir")
	}
}
