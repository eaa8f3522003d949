package storetest

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

func testPackages(t *testing.T, open Opener) {
	s := open(t)
	files := []skilld.PackageFile{
		{Path: "scripts/run.sh", Digest: "sha256:" + fmt.Sprintf("%064d", 2), Size: 20, Exec: true},
		{Path: "SKILL.md", Digest: "sha256:" + fmt.Sprintf("%064d", 1), Size: 10},
		{Path: "Zed.md", Digest: "sha256:" + fmt.Sprintf("%064d", 1), Size: 10},
	}
	for i := range 450 { // more than one INSERT batch
		files = append(files, skilld.PackageFile{Path: fmt.Sprintf("refs/%03d.md", i), Digest: "sha256:" + fmt.Sprintf("%064d", 3+i), Size: int64(i)})
	}
	manifest := []byte("manifest bytes\n")
	p := &store.PackageCreateParams{Digest: "sha256:" + fmt.Sprintf("%064d", 9), Manifest: manifest, Size: 12345, Files: files}
	res := must[*store.PackageCreateResult](t)(s.PackageCreate(ctx(t), p))
	if !res.Created {
		t.Fatal("first store of a package must create it")
	}
	again := must[*store.PackageCreateResult](t)(s.PackageCreate(ctx(t), p))
	if again.Created {
		t.Error("storing the same digest twice must be a no-op")
	}
	info, m, err := s.PackageGet(ctx(t), &store.PackageGetParams{Digest: p.Digest})
	if err != nil || info.FileCount != len(files) || info.Size != 12345 || !bytes.Equal(m, manifest) {
		t.Fatalf("package %+v manifest %q err %v", info, m, err)
	}
	_, _, err = s.PackageGet(ctx(t), &store.PackageGetParams{Digest: "sha256:nope"})
	wantCode(t, err, skilld.ENOTFOUND)

	// PackageList pages through every package in digest order.
	second := &store.PackageCreateParams{Digest: "sha256:" + fmt.Sprintf("%064d", 8), Manifest: manifest, Size: 1, Files: files[:1]}
	must[*store.PackageCreateResult](t)(s.PackageCreate(ctx(t), second))
	page := must[[]skilld.PackageInfo](t)(s.PackageList(ctx(t), &store.PackageListParams{Limit: 1}))
	if len(page) != 1 || page[0].Digest != second.Digest {
		t.Errorf("first page %+v", page)
	}
	page = must[[]skilld.PackageInfo](t)(s.PackageList(ctx(t), &store.PackageListParams{After: page[0].Digest, Limit: 10}))
	if len(page) != 1 || page[0].Digest != p.Digest || page[0].FileCount != len(files) {
		t.Errorf("second page %+v", page)
	}
	if err := s.PackageDelete(ctx(t), &store.PackageDeleteParams{Digest: second.Digest}); err != nil {
		t.Fatal(err)
	}
	got := must[[]skilld.PackageFile](t)(s.PackageFileList(ctx(t), &store.PackageFileListParams{Digest: p.Digest}))
	if len(got) != len(files) {
		t.Fatalf("%d files, want %d", len(got), len(files))
	}
	// Byte order: upper case before lower case, whatever the database locale.
	if got[0].Path != "SKILL.md" || got[1].Path != "Zed.md" || got[2].Path != "refs/000.md" || got[len(got)-1].Path != "scripts/run.sh" {
		t.Errorf("file order: %s, %s, %s … %s", got[0].Path, got[1].Path, got[2].Path, got[len(got)-1].Path)
	}
	if !reflect.DeepEqual(got[len(got)-1], files[0]) {
		t.Errorf("file read back %+v, want %+v", got[len(got)-1], files[0])
	}

	ref := must[map[string]bool](t)(s.BlobReferenced(ctx(t), &store.BlobReferencedParams{Digests: []string{files[1].Digest, "sha256:unused"}}))
	if !ref[files[1].Digest] || ref["sha256:unused"] || len(ref) != 1 {
		t.Errorf("referenced = %v", ref)
	}

	// A package is referenced once a skill version or catalog version uses it.
	ws := newWorkspace(t, s, "w")
	sk := newSkill(t, s, ws.ID, "s")
	used, unused := newPackage(t, s, "used"), newPackage(t, s, "unused")
	must[*skilld.SkillVersion](t)(s.SkillVersionCreate(ctx(t), &store.SkillVersionCreateParams{WorkspaceID: ws.ID, SkillID: sk.ID, Digest: used}))
	pref := must[map[string]bool](t)(s.PackageReferenced(ctx(t), &store.PackageReferencedParams{Digests: []string{used, unused, p.Digest}}))
	if !pref[used] || pref[unused] || pref[p.Digest] {
		t.Errorf("package references = %v", pref)
	}
	wantCode(t, s.PackageDelete(ctx(t), &store.PackageDeleteParams{Digest: used}), skilld.EINVALID)
	if err := s.PackageDelete(ctx(t), &store.PackageDeleteParams{Digest: p.Digest}); err != nil {
		t.Fatal(err)
	}
	if left := must[map[string]bool](t)(s.BlobReferenced(ctx(t), &store.BlobReferencedParams{Digests: []string{files[0].Digest}})); len(left) != 0 {
		t.Errorf("files of a deleted package still referenced: %v", left)
	}
	if err := s.PackageDelete(ctx(t), &store.PackageDeleteParams{Digest: p.Digest}); err != nil {
		t.Errorf("deleting a missing package: %v", err)
	}
	p.Files = p.Files[:1]

	e0 := must[int64](t)(s.BlobGuard(ctx(t), &store.BlobGuardParams{}))
	var e1 int64
	if err := s.Tx(ctx(t), func(q store.Querier) error {
		var err error
		e1, err = q.BlobGuard(ctx(t), &store.BlobGuardParams{Exclusive: true})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if e1 != e0+1 {
		t.Errorf("exclusive guard epoch %d after %d", e1, e0)
	}
	if res := must[*store.PackageCreateResult](t)(s.PackageCreate(ctx(t), p)); res.Epoch != e1 {
		t.Errorf("package create saw epoch %d, want %d", res.Epoch, e1)
	}
}
