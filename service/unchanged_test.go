package service_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/storetest"
)

// Actions that change nothing make nothing: no version, no event, no
// catalog version; they answer what is there, marked unchanged.
func TestUnchanged(t *testing.T) {
	forDrivers(t, func(t *testing.T, open storetest.Opener) {
		t.Run("Edits", func(t *testing.T) { testUnchangedEdits(t, open) })
		t.Run("Catalog", func(t *testing.T) { testUnchangedCatalog(t, open) })
		t.Run("ConcurrentEdits", func(t *testing.T) { testConcurrentIdenticalEdits(t, open) })
		t.Run("ConcurrentPublishes", func(t *testing.T) { testConcurrentIdenticalPublishes(t, open) })
		t.Run("RepairsBlobs", func(t *testing.T) { testUnchangedRepairs(t, open) })
	})
}

// events lists the kinds of the workspace's events after id.
func (e *env) events(t *testing.T, ws string, after int64) ([]string, int64) {
	t.Helper()
	evs := must[[]*skilld.Event](t)(e.db.EventList(t.Context(), &store.EventListParams{WorkspaceID: ws, AfterID: after, Limit: 1000}))
	var kinds []string
	for _, ev := range evs {
		kinds, after = append(kinds, ev.Kind), ev.ID
	}
	return kinds, after
}

func (e *env) versionCount(t *testing.T, a service.Actor, ref string) int {
	t.Helper()
	vs := must[*service.VersionList](t)(e.svc.ListSkillVersions(t.Context(), a, service.ListSkillVersionsParams{SkillRef: service.SkillRef{ID: ref}}))
	return len(vs.Items)
}

func testUnchangedEdits(t *testing.T, open storetest.Opener) {
	e := newEnv(t, open, service.Config{}, nil)
	ctx := t.Context()
	ws := e.member.WorkspaceID
	ref := service.SkillRef{ID: "notes"}
	files := map[string]string{"SKILL.md": skillMD("notes", "Take notes"), "scripts/run.sh": "#!/bin/sh\necho hi\n"}
	sk := must[*service.SkillView](t)(e.svc.CreateSkill(ctx, e.member, service.CreateSkillParams{Files: files}))
	_, mark := e.events(t, ws, 0)

	// The same files again: version 1 still, nothing written.
	same := must[*service.SkillView](t)(e.svc.ReplaceSkillFiles(ctx, e.member, service.ReplaceSkillFilesParams{SkillRef: ref, Files: files, Message: "again"}))
	if !same.Unchanged || same.Version != 1 || same.Digest != sk.Digest || !same.UpdatedAt.Equal(sk.UpdatedAt) {
		t.Errorf("identical edit: unchanged %v, version %d, updated %v (was %v)", same.Unchanged, same.Version, same.UpdatedAt, sk.UpdatedAt)
	}
	same = must[*service.SkillView](t)(e.svc.ReplaceSkillFiles(ctx, e.member, service.ReplaceSkillFilesParams{SkillRef: ref, Files: files, ExpectedVersion: ptr(1)}))
	if !same.Unchanged || same.Version != 1 {
		t.Errorf("identical edit at the expected version: %+v", same)
	}
	// The archive route compares the same way: the files of version 1 zipped.
	same = must[*service.SkillView](t)(e.svc.ReplaceSkillFilesFromArchive(ctx, e.member, service.ReplaceSkillFilesFromArchiveParams{SkillRef: ref,
		Archive: tarGzOf(t, map[string]tarFile{"notes/SKILL.md": {data: files["SKILL.md"]}, "notes/scripts/run.sh": {data: files["scripts/run.sh"], exec: true}})}))
	if !same.Unchanged || same.Version != 1 {
		t.Errorf("identical archive: %+v", same)
	}
	// Restoring the current version changes nothing either.
	same = must[*service.SkillView](t)(e.svc.RestoreSkillVersion(ctx, e.member, service.RestoreSkillVersionParams{SkillRef: ref, Number: 1}))
	if !same.Unchanged || same.Version != 1 {
		t.Errorf("restore of the current version: %+v", same)
	}
	if n := e.versionCount(t, e.viewer, "notes"); n != 1 {
		t.Errorf("%d versions after edits that change nothing, want 1", n)
	}
	if kinds, _ := e.events(t, ws, mark); len(kinds) != 0 {
		t.Errorf("edits that change nothing recorded events %v", kinds)
	}

	// A stale expected_version is still a conflict, even with the current
	// files: the caller's view is out of date.
	v2 := must[*service.SkillView](t)(e.svc.ReplaceSkillFiles(ctx, e.member, service.ReplaceSkillFilesParams{SkillRef: ref,
		Files: map[string]string{"SKILL.md": skillMD("notes", "Take notes, v2")}}))
	if v2.Unchanged || v2.Version != 2 {
		t.Fatalf("a real edit: %+v", v2)
	}
	_, err := e.svc.ReplaceSkillFiles(ctx, e.member, service.ReplaceSkillFilesParams{SkillRef: ref,
		Files: map[string]string{"SKILL.md": skillMD("notes", "Take notes, v2")}, ExpectedVersion: ptr(1)})
	wantCode(t, err, skilld.ECONFLICT)
	// The same files under another description (an override) are a change.
	d := must[*service.SkillView](t)(e.svc.ReplaceSkillFiles(ctx, e.member, service.ReplaceSkillFilesParams{SkillRef: ref,
		Files: map[string]string{"SKILL.md": skillMD("notes", "Take notes, v2")}, SkillOptions: service.SkillOptions{Description: "Other words"}}))
	if d.Unchanged || d.Version != 3 || d.Description != "Other words" {
		t.Errorf("same files, new description: %+v", d)
	}
	// Going back to older files is a change: a new version.
	back := must[*service.SkillView](t)(e.svc.ReplaceSkillFiles(ctx, e.member, service.ReplaceSkillFilesParams{SkillRef: ref, Files: files}))
	if back.Unchanged || back.Version != 4 || back.Digest != sk.Digest {
		t.Errorf("back to version 1's files: %+v", back)
	}
	if n := e.versionCount(t, e.viewer, "notes"); n != 4 {
		t.Errorf("%d versions, want 4", n)
	}
}

func testUnchangedCatalog(t *testing.T, open storetest.Opener) {
	e := newEnv(t, open, service.Config{}, nil)
	ctx := t.Context()
	ws := e.member.WorkspaceID
	must[*skilld.Registry](t)(e.svc.CreateRegistry(ctx, e.root, service.CreateRegistryParams{Name: "acme", Trust: skilld.TrustCommunity}))
	p1 := publish(t, e, "acme", "lint", "Lint v1")
	again := publish(t, e, "acme", "lint", "Lint v1")
	if !again.Unchanged || again.Version != 1 || again.Digest != p1.Digest || again.LatestVersion != 1 || !again.AlreadyExisted() {
		t.Errorf("publishing the same archive again: %+v", again)
	}
	// The same files in another archive format and folder are the same package.
	again = must[*service.PublishedItem](t)(e.svc.PublishCatalogItem(ctx, e.root, service.PublishCatalogItemParams{Registry: "acme",
		Archive: tarGzOf(t, map[string]tarFile{"SKILL.md": {data: skillMD("lint", "Lint v1")}})}))
	if !again.Unchanged || again.Version != 1 {
		t.Errorf("the same files as a tar.gz: %+v", again)
	}
	item := must[*skilld.CatalogItem](t)(e.db.CatalogItemGet(ctx, &store.CatalogItemGetParams{Registry: "acme", Name: "lint"}))
	if vs := must[[]*skilld.CatalogItemVersion](t)(e.db.CatalogItemVersionList(ctx, &store.CatalogItemVersionListParams{ItemID: item.ID})); len(vs) != 1 {
		t.Errorf("%d catalog versions after identical publishes, want 1", len(vs))
	}
	// Another description is a new version.
	p2 := must[*service.PublishedItem](t)(e.svc.PublishCatalogItem(ctx, e.root, service.PublishCatalogItemParams{Registry: "acme",
		Archive: zipOf(t, map[string]string{"lint/SKILL.md": skillMD("lint", "Lint v1")}), SkillOptions: service.SkillOptions{Description: "Lint, described"}}))
	if p2.Unchanged || p2.Version != 2 {
		t.Errorf("same files, new description: %+v", p2)
	}

	in := must[*service.SkillView](t)(e.svc.InstallSkill(ctx, e.member, service.InstallSkillParams{Item: "acme/lint", Version: 1}))
	_, mark := e.events(t, ws, 0)
	// An identical edit of an install does not fork it.
	same := must[*service.SkillView](t)(e.svc.ReplaceSkillFiles(ctx, e.member, service.ReplaceSkillFilesParams{SkillRef: service.SkillRef{ID: in.ID},
		Files: map[string]string{"SKILL.md": skillMD("lint", "Lint v1")}}))
	if !same.Unchanged || same.Forked || same.Version != 1 || !same.UpdateAvailable {
		t.Errorf("identical edit of an install: %+v", same)
	}
	// Updating to the version installed changes nothing.
	up := must[*service.SkillView](t)(e.svc.UpdateInstalledSkill(ctx, e.admin, service.UpdateInstalledSkillParams{SkillRef: service.SkillRef{ID: in.ID}, Version: 1}))
	if !up.Unchanged || up.Version != 1 || up.CatalogVersion != 1 {
		t.Errorf("update to the installed version: %+v", up)
	}
	if kinds, _ := e.events(t, ws, mark); len(kinds) != 0 {
		t.Errorf("changes that change nothing recorded events %v", kinds)
	}
	// The latest is a real update; asking for it again is not.
	up = must[*service.SkillView](t)(e.svc.UpdateInstalledSkill(ctx, e.admin, service.UpdateInstalledSkillParams{SkillRef: service.SkillRef{ID: in.ID}}))
	if up.Unchanged || up.Version != 2 || up.CatalogVersion != 2 || up.Description != "Lint, described" {
		t.Errorf("update to the latest: %+v", up)
	}
	up = must[*service.SkillView](t)(e.svc.UpdateInstalledSkill(ctx, e.admin, service.UpdateInstalledSkillParams{SkillRef: service.SkillRef{ID: in.ID}}))
	if !up.Unchanged || up.Version != 2 {
		t.Errorf("update to the latest again: %+v", up)
	}
	// A forked install reset to the catalog's files is a change (it is no
	// longer forked), even when its files are those of the pin.
	forked := must[*service.SkillView](t)(e.svc.ReplaceSkillFiles(ctx, e.member, service.ReplaceSkillFilesParams{SkillRef: service.SkillRef{ID: in.ID},
		Files: map[string]string{"SKILL.md": skillMD("lint", "Our lint")}}))
	if !forked.Forked || forked.Version != 3 {
		t.Fatalf("fork: %+v", forked)
	}
	reset := must[*service.SkillView](t)(e.svc.UpdateInstalledSkill(ctx, e.admin, service.UpdateInstalledSkillParams{SkillRef: service.SkillRef{ID: in.ID}, Reset: true}))
	if reset.Unchanged || reset.Forked || reset.Version != 4 {
		t.Errorf("reset: %+v", reset)
	}
	if n := e.versionCount(t, e.viewer, in.ID); n != 4 {
		t.Errorf("%d versions of the install, want 4", n)
	}
}

// Identical edits sent at once make one version between them: whichever
// commits first makes it, the others find it and change nothing.
func testConcurrentIdenticalEdits(t *testing.T, open storetest.Opener) {
	e := newEnv(t, open, service.Config{}, nil)
	ctx := t.Context()
	must[*service.SkillView](t)(e.svc.CreateSkill(ctx, e.member, service.CreateSkillParams{Files: map[string]string{"SKILL.md": skillMD("race", "v1")}}))
	const n = 8
	results := make([]*service.SkillView, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			results[i], errs[i] = e.svc.ReplaceSkillFiles(ctx, e.member, service.ReplaceSkillFilesParams{SkillRef: service.SkillRef{ID: "race"},
				Files: map[string]string{"SKILL.md": skillMD("race", "v2"), "new.md": "the same new file"}})
		})
	}
	wg.Wait()
	made := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("edit %d: %v", i, errs[i])
		}
		if !results[i].Unchanged {
			made++
		}
		if results[i].Version != 2 {
			t.Errorf("edit %d answered version %d, want 2", i, results[i].Version)
		}
	}
	if made != 1 {
		t.Errorf("%d of %d identical edits made a version, want 1", made, n)
	}
	if c := e.versionCount(t, e.viewer, "race"); c != 2 {
		t.Errorf("%d versions, want 2", c)
	}
}

func testConcurrentIdenticalPublishes(t *testing.T, open storetest.Opener) {
	e := newEnv(t, open, service.Config{}, nil)
	ctx := t.Context()
	must[*skilld.Registry](t)(e.svc.CreateRegistry(ctx, e.root, service.CreateRegistryParams{Name: "acme", Trust: skilld.TrustCommunity}))
	publish(t, e, "acme", "race", "v1")
	const n = 8
	results := make([]*service.PublishedItem, n)
	errs := make([]error, n)
	archive := zipOf(t, map[string]string{"race/SKILL.md": skillMD("race", "v2")})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			results[i], errs[i] = e.svc.PublishCatalogItem(ctx, e.root, service.PublishCatalogItemParams{Registry: "acme", Archive: archive})
		})
	}
	wg.Wait()
	made := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("publish %d: %v", i, errs[i])
		}
		if !results[i].Unchanged {
			made++
		}
		if results[i].Version != 2 {
			t.Errorf("publish %d answered version %d, want 2", i, results[i].Version)
		}
	}
	if made != 1 {
		t.Errorf("%d of %d identical publishes made a version, want 1", made, n)
	}
}

// An edit with the files a skill has still stores them, so it repairs a
// damaged stored copy, as the integrity error tells people to do.
func testUnchangedRepairs(t *testing.T, open storetest.Opener) {
	bd := blobDrivers()[0]
	e := newEnvOn(t, open, bd.open(t), service.Config{}, nil)
	ctx := t.Context()
	files := map[string]string{"SKILL.md": skillMD("fragile", "d"), "data.txt": strings.Repeat("precious data ", 10)}
	sk := must[*service.SkillView](t)(e.svc.CreateSkill(ctx, e.member, service.CreateSkillParams{Files: files}))
	list := must[*service.SkillFiles](t)(e.svc.ListSkillFiles(ctx, e.viewer, service.ListSkillFilesParams{SkillRef: service.SkillRef{ID: sk.ID}}))
	bd.damage(t, e.blobs, list.Files[1].Digest)
	_, err := e.svc.GetSkillFile(ctx, e.viewer, service.GetSkillFileParams{SkillRef: service.SkillRef{ID: sk.ID}, Path: "data.txt"})
	wantCode(t, err, skilld.EINTEGRITY)
	same := must[*service.SkillView](t)(e.svc.ReplaceSkillFiles(ctx, e.member, service.ReplaceSkillFilesParams{SkillRef: service.SkillRef{ID: sk.ID}, Files: files}))
	if !same.Unchanged || same.Version != 1 {
		t.Errorf("identical edit: %+v", same)
	}
	f := must[*service.SkillFile](t)(e.svc.GetSkillFile(ctx, e.viewer, service.GetSkillFileParams{SkillRef: service.SkillRef{ID: sk.ID}, Path: "data.txt"}))
	f.Body.Close()
}
