package importer_test

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/importer"
)

// cands makes candidates as Fetch would name them: the folder's base
// name, or the repository name "r" for the root.
func cands(paths ...string) []importer.Candidate {
	var c []importer.Candidate
	for _, p := range paths {
		name := path.Base(p)
		if p == "" {
			name = "r"
		}
		c = append(c, importer.Candidate{Path: p, Name: name})
	}
	return c
}

func TestSelect(t *testing.T) {
	t.Parallel()
	all := cands("", "skills/a", "skills/b", "other/a")

	got, err := importer.Select(all, "b", false)
	if err != nil || candPaths(got)[0] != "skills/b" || len(got) != 1 {
		t.Fatalf("by name: %q, %v", candPaths(got), err)
	}
	got, err = importer.Select(all, "skills/a/", true)
	if err != nil || len(got) != 1 || got[0].Path != "skills/a" {
		t.Fatalf("by path (import_all ignored): %q, %v", candPaths(got), err)
	}
	got, err = importer.Select(all, "r", false)
	if err != nil || len(got) != 1 || got[0].Path != "" {
		t.Fatalf("the root by repository name: %q, %v", candPaths(got), err)
	}

	_, err = importer.Select(all, "a", false)
	wantErr(t, err, skilld.EINVALID, nil, "2 skill folders are named", "skills/a", "other/a")

	_, err = importer.Select(all, "zzz", false)
	wantErr(t, err, skilld.ENOTFOUND, nil, `"zzz"`, "available", "b (skills/b)", "r (.)")
	if len(skilld.ErrorDetails(err)) != len(all) {
		t.Fatalf("details %+v", skilld.ErrorDetails(err))
	}

	_, err = importer.Select(all, "", false)
	wantErr(t, err, skilld.EINVALID, importer.ErrMultipleSkills, "multiple_skills_found", "import_all", "skills/b")
	d := skilld.ErrorDetails(err)
	if len(d) != 4 || d[0].Field != "." || d[1].Field != "skills/a" || d[3].Field != "skills/b" && d[3].Field != "other/a" {
		t.Fatalf("details %+v, want every candidate path", d)
	}

	got, err = importer.Select(all, "", true)
	if err != nil || !slices.Equal(candPaths(got), candPaths(all)) {
		t.Fatalf("import_all: %q, %v", candPaths(got), err)
	}
	got[0].Name = "changed"
	if all[0].Name == "changed" {
		t.Fatal("Select returned the caller's slice")
	}

	one, err := importer.Select(cands("only"), "", false)
	if err != nil || len(one) != 1 {
		t.Fatalf("a single candidate needs no selector: %v", err)
	}
	_, err = importer.Select(nil, "", true)
	wantErr(t, err, skilld.ENOTFOUND, nil)
}

func TestSelectImportAllLimit(t *testing.T) {
	t.Parallel()
	var paths []string
	for i := range importer.MaxPackagesPerImport + 1 {
		paths = append(paths, fmt.Sprintf("s/%02d", i))
	}
	_, err := importer.Select(cands(paths...), "", true)
	wantErr(t, err, skilld.ETOOLARGE, nil, "11 skills", "10")
	if errors.Is(err, importer.ErrMultipleSkills) {
		t.Fatal("a too-large import_all is not multiple_skills_found")
	}
	got, err := importer.Select(cands(paths[:10]...), "", true)
	if err != nil || len(got) != 10 {
		t.Fatalf("10 with import_all: %d, %v", len(got), err)
	}
}
