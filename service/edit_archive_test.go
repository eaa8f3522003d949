package service_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store/storetest"
)

type tarFile struct {
	data string
	exec bool
}

func tarGzOf(t *testing.T, files map[string]tarFile) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, f := range files {
		mode := int64(0o644)
		if f.exec {
			mode = 0o755
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: int64(len(f.data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(f.data))
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestEditFromArchive(t *testing.T) {
	forDrivers(t, func(t *testing.T, open storetest.Opener) {
		t.Run("NewVersion", func(t *testing.T) { testArchiveVersion(t, open) })
		t.Run("Refused", func(t *testing.T) { testArchiveVersionRefused(t, open) })
	})
}

// png is a file no inline edit can carry: not UTF-8, with a NUL.
const png = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe"

func testArchiveVersion(t *testing.T, open storetest.Opener) {
	e := newEnv(t, open, service.Config{}, nil)
	ctx := t.Context()
	sk := must[*service.SkillView](t)(e.svc.CreateSkillFromArchive(ctx, e.member, service.CreateSkillFromArchiveParams{
		Archive: zipOf(t, map[string]string{"charts/SKILL.md": skillMD("charts", "Draw charts"), "charts/logo.png": png})}))
	ref := service.SkillRef{ID: sk.ID}

	v2 := must[*service.SkillView](t)(e.svc.ReplaceSkillFilesFromArchive(ctx, e.member, service.ReplaceSkillFilesFromArchiveParams{SkillRef: ref,
		Archive: tarGzOf(t, map[string]tarFile{
			"charts/SKILL.md":     {data: skillMD("charts", "Draw charts, v2")},
			"charts/logo.png":     {data: png + "v2"},
			"charts/bin/render":   {data: "\x7fELF\x00binary", exec: true},
			"charts/data/ref.csv": {data: "a,b\n"},
		}), ExpectedVersion: ptr(1), Message: "new logo"}))
	if v2.Unchanged || v2.Version != 2 || v2.Description != "Draw charts, v2" || v2.SourceType != skilld.SourceZip {
		t.Fatalf("version 2: %+v", v2)
	}
	files := must[*service.SkillFiles](t)(e.svc.ListSkillFiles(ctx, e.viewer, service.ListSkillFilesParams{SkillRef: ref}))
	if len(files.Files) != 4 || files.Files[1].Path != "bin/render" || !files.Files[1].Exec {
		t.Errorf("version 2 files %+v", files.Files)
	}
	f := must[*service.SkillFile](t)(e.svc.GetSkillFile(ctx, e.viewer, service.GetSkillFileParams{SkillRef: ref, Path: "logo.png"}))
	body, _ := io.ReadAll(f.Body)
	f.Body.Close()
	if string(body) != png+"v2" {
		t.Errorf("logo.png of version 2: %q", body)
	}
	vs := must[*service.VersionList](t)(e.svc.ListSkillVersions(ctx, e.viewer, service.ListSkillVersionsParams{SkillRef: ref}))
	if len(vs.Items) != 2 || vs.Items[0].Message != "new logo" {
		t.Errorf("versions %+v", vs.Items)
	}
	// The version 1 files are still there to restore.
	r := must[*service.SkillView](t)(e.svc.RestoreSkillVersion(ctx, e.member, service.RestoreSkillVersionParams{SkillRef: ref, Number: 1}))
	if r.Version != 3 || r.Digest != sk.Digest {
		t.Errorf("restore: %+v", r.Skill)
	}
	// An archive without a top folder, and a name override that keeps the
	// skill's name for a SKILL.md naming another.
	v4 := must[*service.SkillView](t)(e.svc.ReplaceSkillFilesFromArchive(ctx, e.member, service.ReplaceSkillFilesFromArchiveParams{SkillRef: ref,
		Archive: zipOf(t, map[string]string{"SKILL.md": skillMD("graphs", "Draw graphs"), "logo.png": png}), SkillOptions: service.SkillOptions{Name: "charts"}}))
	if v4.Version != 4 || v4.Name != "charts" || v4.Description != "Draw graphs" {
		t.Errorf("with a name override: %+v", v4.Skill)
	}
	if c := must[*service.SkillContent](t)(e.svc.GetSkillContent(ctx, e.viewer, service.GetSkillContentParams{SkillRef: ref})); !strings.Contains(c.Content, "name: charts\n") {
		t.Errorf("the stored SKILL.md after an edit that keeps the name:\n%s", c.Content)
	}
	// Editing an install this way forks it, as any edit does.
	must[*skilld.Registry](t)(e.svc.CreateRegistry(ctx, e.root, service.CreateRegistryParams{Name: "acme", Trust: skilld.TrustCommunity}))
	publish(t, e, "acme", "lint", "Lint")
	in := must[*service.SkillView](t)(e.svc.InstallSkill(ctx, e.member, service.InstallSkillParams{Item: "acme/lint"}))
	forked := must[*service.SkillView](t)(e.svc.ReplaceSkillFilesFromArchive(ctx, e.member, service.ReplaceSkillFilesFromArchiveParams{SkillRef: service.SkillRef{ID: "lint"},
		Archive: zipOf(t, map[string]string{"lint/SKILL.md": skillMD("lint", "Our lint"), "lint/icon.png": png})}))
	if forked.ID != in.ID || !forked.Forked || forked.Version != 2 {
		t.Errorf("archive edit of an install: %+v", forked.Skill)
	}
}

func testArchiveVersionRefused(t *testing.T, open storetest.Opener) {
	e := newEnv(t, open, service.Config{}, nil)
	ctx := t.Context()
	sk := must[*service.SkillView](t)(e.svc.CreateSkill(ctx, e.member, service.CreateSkillParams{Files: map[string]string{"SKILL.md": skillMD("charts", "Draw charts")}}))
	must[*service.SkillView](t)(e.svc.CreateSkill(ctx, e.member, service.CreateSkillParams{Files: map[string]string{"SKILL.md": skillMD("other", "Another")}}))
	ref := service.SkillRef{ID: "charts"}
	blobs := e.blobCount(t)
	edit := func(a service.Actor, archive []byte, o service.SkillOptions) error {
		_, err := e.svc.ReplaceSkillFilesFromArchive(ctx, a, service.ReplaceSkillFilesFromArchiveParams{SkillRef: ref, Archive: archive, SkillOptions: o})
		return err
	}
	for _, tc := range []struct {
		name    string
		actor   service.Actor
		archive []byte
		opts    service.SkillOptions
		code    string
		message string
	}{
		{"a viewer", e.viewer, zipOf(t, map[string]string{"charts/SKILL.md": skillMD("charts", "x"), "charts/new.bin": png}), service.SkillOptions{}, skilld.EFORBIDDEN, ""},
		{"another skill's archive", e.member, zipOf(t, map[string]string{"other/SKILL.md": skillMD("other", "x"), "other/new.bin": png}), service.SkillOptions{},
			skilld.EINVALID, `the archive holds the skill "other", not "charts": upload it to that skill or as a new one, or pass name`},
		{"a rename to a taken name", e.member, zipOf(t, map[string]string{"SKILL.md": skillMD("x", "x"), "new.bin": png}), service.SkillOptions{Name: "other"}, skilld.ECONFLICT, ""},
		{"a folder not named as the skill", e.member, zipOf(t, map[string]string{"v2/SKILL.md": skillMD("charts", "x"), "v2/new.bin": png}), service.SkillOptions{}, skilld.EINVALID, "v2"},
		{"several skills", e.member, zipOf(t, map[string]string{"a/SKILL.md": skillMD("a", "x"), "b/SKILL.md": skillMD("b", "x"), "b/new.bin": png}), service.SkillOptions{},
			skilld.EINVALID, "the archive holds 2 skills (a, b), not one at its root; upload them one by one"},
		{"no archive", e.member, nil, service.SkillOptions{}, skilld.EINVALID, "archive is empty"},
		{"garbage", e.member, []byte("not an archive at all"), service.SkillOptions{}, skilld.EINVALID, ""},
		{"a link", e.member, tarWithLink(t), service.SkillOptions{}, skilld.EINVALID, "link"},
		{"an unsafe path", e.member, zipOf(t, map[string]string{"x/../../evil": "x"}), service.SkillOptions{}, skilld.EINVALID, ""},
		{"invalid SKILL.md", e.member, zipOf(t, map[string]string{"SKILL.md": "no frontmatter", "new.bin": png}), service.SkillOptions{}, skilld.EINVALID, ""},
	} {
		err := edit(tc.actor, tc.archive, tc.opts)
		if skilld.ErrorCode(err) != tc.code || !strings.Contains(skilld.ErrorMessage(err), tc.message) {
			t.Errorf("%s: %v (code %s), want code %s and %q", tc.name, err, skilld.ErrorCode(err), tc.code, tc.message)
		}
	}
	_, err := e.svc.ReplaceSkillFilesFromArchive(ctx, e.member, service.ReplaceSkillFilesFromArchiveParams{SkillRef: service.SkillRef{ID: "missing"},
		Archive: zipOf(t, map[string]string{"SKILL.md": skillMD("missing", "x")})})
	wantCode(t, err, skilld.ENOTFOUND)
	_, err = e.svc.ReplaceSkillFilesFromArchive(ctx, e.member, service.ReplaceSkillFilesFromArchiveParams{SkillRef: ref, ExpectedVersion: ptr(0),
		Archive: zipOf(t, map[string]string{"SKILL.md": skillMD("charts", "x")})})
	wantCode(t, err, skilld.EINVALID)
	_, err = e.svc.ReplaceSkillFilesFromArchive(ctx, e.member, service.ReplaceSkillFilesFromArchiveParams{SkillRef: ref, ExpectedVersion: ptr(7),
		Archive: zipOf(t, map[string]string{"SKILL.md": skillMD("charts", "x"), "stale.bin": png})})
	wantCode(t, err, skilld.ECONFLICT)
	// Nothing was stored: no version, no blob left behind.
	if n := e.versionCount(t, e.viewer, "charts"); n != 1 {
		t.Errorf("%d versions after refused edits, want 1", n)
	}
	if got := e.blobCount(t); got != blobs {
		t.Errorf("refused edits left %d blobs behind", got-blobs)
	}
	cur := must[*service.SkillView](t)(e.svc.GetSkill(ctx, e.viewer, service.GetSkillParams{SkillRef: ref}))
	if cur.Name != "charts" || cur.Digest != sk.Digest {
		t.Errorf("after refused edits: %+v", cur.Skill)
	}
}

func tarWithLink(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "SKILL.md", Mode: 0o644, Size: int64(len(skillMD("charts", "x"))), Typeflag: tar.TypeReg})
	tw.Write([]byte(skillMD("charts", "x")))
	tw.WriteHeader(&tar.Header{Name: "passwd", Linkname: "/etc/passwd", Typeflag: tar.TypeSymlink})
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// A package holding several skills is refused naming them, whichever way
// it came; a single skill inside a folder is named too.
func TestSeveralSkills(t *testing.T) {
	e := newEnv(t, storetest.Drivers(t)[0].Open, service.Config{}, nil)
	ctx := t.Context()
	four := map[string]string{}
	for _, n := range []string{"d", "b", "a", "c"} {
		four["skills/"+n+"/SKILL.md"] = skillMD(n, "Skill "+n)
	}
	four["skills/a/examples/x/SKILL.md"] = skillMD("x", "an example inside a")
	_, err := e.svc.CreateSkillFromArchive(ctx, e.member, service.CreateSkillFromArchiveParams{Archive: zipOf(t, four)})
	wantMessage(t, err, skilld.EINVALID, "the archive holds 4 skills (a, b, c, d), not one at its root; upload them one by one: an archive of each skill's folder")
	_, err = e.svc.CreateSkill(ctx, e.member, service.CreateSkillParams{Files: four})
	wantMessage(t, err, skilld.EINVALID, "the files hold 4 skills (skills/a, skills/b, skills/c, skills/d), not one at its root; send them one by one")
	must[*skilld.Registry](t)(e.svc.CreateRegistry(ctx, e.root, service.CreateRegistryParams{Name: "acme", Trust: skilld.TrustCommunity}))
	_, err = e.svc.PublishCatalogItem(ctx, e.root, service.PublishCatalogItemParams{Registry: "acme", Archive: zipOf(t, four)})
	wantMessage(t, err, skilld.EINVALID, "the archive holds 4 skills (a, b, c, d)")
	one := map[string]string{"repo/README.md": "readme", "repo/tools/lint/SKILL.md": skillMD("lint", "Lint")}
	_, err = e.svc.CreateSkillFromArchive(ctx, e.member, service.CreateSkillFromArchiveParams{Archive: zipOf(t, one)})
	wantMessage(t, err, skilld.EINVALID, "the archive holds 1 skill (tools/lint), not at its root; upload an archive of that folder instead")
	_, err = e.svc.CreateSkillFromArchive(ctx, e.member, service.CreateSkillFromArchiveParams{Archive: zipOf(t, map[string]string{"README.md": "x"})})
	wantMessage(t, err, skilld.EINVALID, "the skill has no SKILL.md at its root")
	if page := must[*service.SkillPage](t)(e.svc.ListSkills(ctx, e.viewer, service.ListSkillsParams{})); page.Total != 0 {
		t.Errorf("%d skills after refused uploads", page.Total)
	}
	if n := e.blobCount(t); n != 0 {
		t.Errorf("refused uploads left %d blobs", n)
	}
}

func wantMessage(t *testing.T, err error, code, message string) {
	t.Helper()
	if skilld.ErrorCode(err) != code || !strings.Contains(skilld.ErrorMessage(err), message) {
		t.Errorf("error %v (code %s), want code %s and %q", err, skilld.ErrorCode(err), code, message)
	}
}

// A version that does not exist is named by the skill's name, with how
// many versions there are.
func TestVersionNotFound(t *testing.T) {
	e := newEnv(t, storetest.Drivers(t)[0].Open, service.Config{}, nil)
	ctx := t.Context()
	sk := must[*service.SkillView](t)(e.svc.CreateSkill(ctx, e.member, service.CreateSkillParams{Files: map[string]string{"SKILL.md": skillMD("csv-inspector", "v1")}}))
	ref := service.SkillRef{ID: sk.ID}
	const one = `version 99 of skill "csv-inspector" not found (it has 1 version)`
	_, err := e.svc.GetSkillVersion(ctx, e.viewer, service.GetSkillVersionParams{SkillRef: ref, Number: 99})
	wantMessage(t, err, skilld.ENOTFOUND, one)
	for _, md := range []string{"v2", "v3"} {
		must[*service.SkillView](t)(e.svc.ReplaceSkillFiles(ctx, e.member, service.ReplaceSkillFilesParams{SkillRef: ref, Files: map[string]string{"SKILL.md": skillMD("csv-inspector", md)}}))
	}
	const three = `version 99 of skill "csv-inspector" not found (it has 3 versions)`
	_, err = e.svc.GetSkillVersion(ctx, e.viewer, service.GetSkillVersionParams{SkillRef: ref, Number: 99})
	wantMessage(t, err, skilld.ENOTFOUND, three)
	_, err = e.svc.RestoreSkillVersion(ctx, e.member, service.RestoreSkillVersionParams{SkillRef: ref, Number: 99})
	wantMessage(t, err, skilld.ENOTFOUND, three)
	_, err = e.svc.GetSkillContent(ctx, e.viewer, service.GetSkillContentParams{SkillRef: ref, Version: 99})
	wantMessage(t, err, skilld.ENOTFOUND, three)
	_, err = e.svc.ListSkillFiles(ctx, e.viewer, service.ListSkillFilesParams{SkillRef: ref, Version: 99})
	wantMessage(t, err, skilld.ENOTFOUND, three)
	_, err = e.svc.GetSkillFile(ctx, e.viewer, service.GetSkillFileParams{SkillRef: ref, Path: "SKILL.md", Version: 99})
	wantMessage(t, err, skilld.ENOTFOUND, three)
	_, err = e.svc.GetSkillFile(ctx, e.viewer, service.GetSkillFileParams{SkillRef: ref, Path: "nope.md"})
	wantMessage(t, err, skilld.ENOTFOUND, `file "nope.md" not found in version 3 of skill "csv-inspector"`)

	must[*skilld.Registry](t)(e.svc.CreateRegistry(ctx, e.root, service.CreateRegistryParams{Name: "acme", Trust: skilld.TrustCommunity}))
	publish(t, e, "acme", "lint", "Lint v1")
	publish(t, e, "acme", "lint", "Lint v2")
	_, err = e.svc.InstallSkill(ctx, e.member, service.InstallSkillParams{Item: "acme/lint", Version: 9})
	wantMessage(t, err, skilld.ENOTFOUND, `version 9 of catalog item "acme/lint" not found (it has 2 versions)`)
	must[*service.SkillView](t)(e.svc.InstallSkill(ctx, e.member, service.InstallSkillParams{Item: "acme/lint", Version: 1}))
	_, err = e.svc.UpdateInstalledSkill(ctx, e.admin, service.UpdateInstalledSkillParams{SkillRef: service.SkillRef{ID: "lint"}, Version: 9})
	wantMessage(t, err, skilld.ENOTFOUND, `version 9 of catalog item "acme/lint" not found (it has 2 versions)`)
}
