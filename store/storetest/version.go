package storetest

import (
	"sort"
	"sync"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

func testSkillVersions(t *testing.T, open Opener) {
	s := open(t)
	ws := newWorkspace(t, s, "w")
	sk := newSkill(t, s, ws.ID, "s")
	p1, p2 := newPackage(t, s, "one"), newPackage(t, s, "two")
	v1 := must[*skilld.SkillVersion](t)(s.SkillVersionCreate(ctx(t), &store.SkillVersionCreateParams{
		WorkspaceID: ws.ID, SkillID: sk.ID, Digest: p1, Message: "first", CreatedBy: "ada", ExpectedVersion: ptr(0),
	}))
	if v1.Number != 1 || v1.Digest != p1 || v1.Message != "first" {
		t.Fatalf("v1 %+v", v1)
	}
	_, err := s.SkillVersionCreate(ctx(t), &store.SkillVersionCreateParams{WorkspaceID: ws.ID, SkillID: sk.ID, Digest: p2, ExpectedVersion: ptr(0)})
	wantCode(t, err, skilld.ECONFLICT)
	v2 := must[*skilld.SkillVersion](t)(s.SkillVersionCreate(ctx(t), &store.SkillVersionCreateParams{WorkspaceID: ws.ID, SkillID: sk.ID, Digest: p2, CreatedBy: "bob"}))
	if v2.Number != 2 {
		t.Fatalf("v2 %+v", v2)
	}
	// Restoring an old package makes a new version; history is never rewritten.
	v3 := must[*skilld.SkillVersion](t)(s.SkillVersionCreate(ctx(t), &store.SkillVersionCreateParams{WorkspaceID: ws.ID, SkillID: sk.ID, Digest: p1, ExpectedVersion: ptr(2)}))
	if v3.Number != 3 || v3.Digest != p1 {
		t.Fatalf("v3 %+v", v3)
	}
	cur := must[*skilld.Skill](t)(s.SkillGet(ctx(t), &store.SkillGetParams{WorkspaceID: ws.ID, ID: sk.ID}))
	if cur.Digest != p1 {
		t.Errorf("current digest %q, want version 3's %q", cur.Digest, p1)
	}
	if cur.Version != 3 || cur.UpdatedBy != "" {
		t.Errorf("skill after 3 versions: version %d, updated by %q", cur.Version, cur.UpdatedBy)
	}
	_, err = s.SkillVersionCreate(ctx(t), &store.SkillVersionCreateParams{WorkspaceID: ws.ID, SkillID: sk.ID, Digest: "sha256:missing"})
	wantCode(t, err, skilld.EINVALID)
	cur = must[*skilld.Skill](t)(s.SkillGet(ctx(t), &store.SkillGetParams{WorkspaceID: ws.ID, ID: sk.ID}))
	if cur.Version != 3 {
		t.Errorf("a refused version moved the skill to %d", cur.Version)
	}
	_, err = s.SkillVersionCreate(ctx(t), &store.SkillVersionCreateParams{WorkspaceID: ws.ID, SkillID: "missing", Digest: p1})
	wantCode(t, err, skilld.ENOTFOUND)

	list := must[[]*skilld.SkillVersion](t)(s.SkillVersionList(ctx(t), &store.SkillVersionListParams{WorkspaceID: ws.ID, SkillID: sk.ID}))
	if len(list) != 3 || list[0].Number != 3 || list[2].Number != 1 {
		t.Errorf("versions newest first: %+v", list)
	}
	got := must[*skilld.SkillVersion](t)(s.SkillVersionGet(ctx(t), &store.SkillVersionGetParams{WorkspaceID: ws.ID, SkillID: sk.ID, Number: 2}))
	if got.Digest != p2 || got.CreatedBy != "bob" {
		t.Errorf("v2 read back %+v", got)
	}
	_, err = s.SkillVersionGet(ctx(t), &store.SkillVersionGetParams{WorkspaceID: ws.ID, SkillID: sk.ID, Number: 9})
	wantCode(t, err, skilld.ENOTFOUND)
}

// testConcurrentVersions has 8 writers add versions to one skill at once:
// every write must land, with numbers 1…N and no duplicates.
func testConcurrentVersions(t *testing.T, open Opener) {
	s := open(t)
	ws := newWorkspace(t, s, "w")
	sk := newSkill(t, s, ws.ID, "s")
	digest := newPackage(t, s, "p")
	const writers, each = 8, 5
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for range writers {
		wg.Go(func() {
			for range each {
				if _, err := s.SkillVersionCreate(ctx(t), &store.SkillVersionCreateParams{WorkspaceID: ws.ID, SkillID: sk.ID, Digest: digest}); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	list := must[[]*skilld.SkillVersion](t)(s.SkillVersionList(ctx(t), &store.SkillVersionListParams{WorkspaceID: ws.ID, SkillID: sk.ID, Page: store.Page{Limit: 100}}))
	nums := make([]int, len(list))
	for i, v := range list {
		nums[i] = v.Number
	}
	sort.Ints(nums)
	for i, n := range nums {
		if n != i+1 {
			t.Fatalf("version numbers %v are not 1…%d", nums, writers*each)
		}
	}
	if len(nums) != writers*each {
		t.Fatalf("%d versions, want %d", len(nums), writers*each)
	}
	cur := must[*skilld.Skill](t)(s.SkillGet(ctx(t), &store.SkillGetParams{WorkspaceID: ws.ID, ID: sk.ID}))
	if cur.Version != writers*each {
		t.Errorf("current version %d, want %d (lost update)", cur.Version, writers*each)
	}
}
