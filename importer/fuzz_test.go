package importer_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/importer"
	"github.com/skilld/skilld/pack"
)

// FuzzParseGitHubURL checks that any input is either refused with EINVALID
// or parsed into a Source that is safe to use (valid names, a safe path) and
// that survives a round trip through its canonical URL. The seed corpus is
// in testdata/fuzz/FuzzParseGitHubURL.
func FuzzParseGitHubURL(f *testing.F) {
	f.Add("https://github.com/o/r/tree/main/skills/a")
	f.Fuzz(func(t *testing.T, raw string) {
		src, err := importer.ParseGitHubURL(raw)
		if err != nil {
			if skilld.ErrorCode(err) != skilld.EINVALID {
				t.Fatalf("%q: code %s", raw, skilld.ErrorCode(err))
			}
			return
		}
		if src.URL != raw || src.Owner == "" || src.Repo == "" {
			t.Fatalf("%q: %+v", raw, src)
		}
		if strings.ContainsAny(src.Owner+src.Repo+src.Ref, "/?#%\\ ") {
			t.Fatalf("%q: unsafe owner/repo/ref in %+v", raw, src)
		}
		if src.Path != "" {
			if err := pack.CheckPath(src.Path); err != nil {
				t.Fatalf("%q: unsafe path %q: %v", raw, src.Path, err)
			}
		}
		var canon string
		switch src.Kind {
		case importer.KindRepo:
			if src.Ref != "" || src.Path != "" {
				t.Fatalf("%q: a repo source with ref or path: %+v", raw, src)
			}
			canon = "https://github.com/" + src.Owner + "/" + src.Repo
		case importer.KindTree, importer.KindBlob:
			if src.Ref == "" {
				t.Fatalf("%q: no ref in %+v", raw, src)
			}
			canon = "https://github.com/" + src.Owner + "/" + src.Repo + "/" + src.Kind + "/" + src.Ref
			for seg := range strings.SplitSeq(src.Path, "/") {
				if seg != "" {
					canon += "/" + url.PathEscape(seg)
				}
			}
			if src.Kind == importer.KindBlob {
				canon += "/SKILL.md"
			}
		default:
			t.Fatalf("%q: kind %q", raw, src.Kind)
		}
		again, err := importer.ParseGitHubURL(canon)
		again.URL = raw
		if err != nil || again != src {
			t.Fatalf("%q parsed to %+v; its canonical URL %q parses to %+v, %v", raw, src, canon, again, err)
		}
	})
}
