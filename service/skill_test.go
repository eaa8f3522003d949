package service_test

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/storetest"
)

func TestSkills(t *testing.T) {
	forDrivers(t, func(t *testing.T, open storetest.Opener) {
		t.Run("CreateInline", func(t *testing.T) { testCreateInline(t, open) })
		t.Run("RefusedCreateLeavesNothing", func(t *testing.T) { testRefusedCreate(t, open) })
		t.Run("Archive", func(t *testing.T) { testArchive(t, open) })
		t.Run("Versions", func(t *testing.T) { testVersions(t, open) })
		t.Run("Roles", func(t *testing.T) { testRoles(t, open) })
		t.Run("DeleteReleasesStorage", func(t *testing.T) { testDeleteReleases(t, open) })
	})
}

func testCreateInline(t *testing.T, open storetest.Opener) {
	e := newEnv(t, open, service.Config{}, nil)
	ctx := t.Context()
	sk := must[*service.SkillView](t)(e.svc.CreateSkill(ctx, e.member, service.CreateSkillParams{Files: map[string]string{
		"SKILL.md": skillMD("pdf-tools", "Work with PDFs"), "scripts/run.sh": "#!/bin/sh\necho hi\n", "notes.txt": "plain",
	}}))
	if sk.Name != "pdf-tools" || sk.Slug != "pdf-tools" || sk.Version != 1 || sk.SourceType != skilld.SourceContent || !strings.HasPrefix(sk.Digest, "sha256:") {
		t.Fatalf("created %+v", sk.Skill)
	}
	files := must[*service.SkillFiles](t)(e.svc.ListSkillFiles(ctx, e.viewer, service.ListSkillFilesParams{SkillRef: service.SkillRef{ID: sk.Slug}}))
	if len(files.Files) != 3 || files.Files[1].Path != "notes.txt" || files.Files[1].Exec || !files.Files[2].Exec {
		t.Errorf("files %+v", files.Files)
	}
	f := must[*service.SkillFile](t)(e.svc.GetSkillFile(ctx, e.viewer, service.GetSkillFileParams{SkillRef: service.SkillRef{ID: sk.ID}, Path: "scripts/run.sh"}))
	body, _ := io.ReadAll(f.Body)
	f.Body.Close()
	if string(body) != "#!/bin/sh\necho hi\n" {
		t.Errorf("file body %q", body)
	}
	_, err := e.svc.GetSkillFile(ctx, e.viewer, service.GetSkillFileParams{SkillRef: service.SkillRef{ID: sk.ID}, Path: "../../etc/passwd"})
	wantCode(t, err, skilld.ENOTFOUND)
	c := must[*service.SkillContent](t)(e.svc.GetSkillContent(ctx, e.viewer, service.GetSkillContentParams{SkillRef: service.SkillRef{ID: sk.ID}}))
	if !strings.Contains(c.Content, "name: pdf-tools") || c.Name != "pdf-tools" {
		t.Errorf("content %+v", c)
	}

	// Overrides replace the frontmatter and are validated too.
	o := must[*service.SkillView](t)(e.svc.CreateSkill(ctx, e.member, service.CreateSkillParams{
		Files:        map[string]string{"SKILL.md": skillMD("Not Valid", "x")},
		SkillOptions: service.SkillOptions{Name: "renamed", Description: "Better words"},
	}))
	if o.Name != "renamed" || o.Description != "Better words" {
		t.Errorf("overrides %+v", o.Skill)
	}
	// The stored SKILL.md says what the skill is called: the overrides
	// are written into it, the rest of the file kept.
	oc := must[*service.SkillContent](t)(e.svc.GetSkillContent(ctx, e.viewer, service.GetSkillContentParams{SkillRef: service.SkillRef{ID: o.ID}}))
	if !strings.Contains(oc.Content, "name: renamed\n") || !strings.Contains(oc.Content, "description: Better words\n") || strings.Contains(oc.Content, "name: Not Valid") || !strings.Contains(oc.Content, "# Not Valid") {
		t.Errorf("the stored SKILL.md of a renamed skill:\n%s", oc.Content)
	}
	_, err = e.svc.CreateSkill(ctx, e.member, service.CreateSkillParams{Files: map[string]string{"SKILL.md": skillMD("ok", "x")}, SkillOptions: service.SkillOptions{Name: "Bad Name"}})
	wantCode(t, err, skilld.EINVALID)
	_, err = e.svc.CreateSkill(ctx, e.member, service.CreateSkillParams{Files: map[string]string{"SKILL.md": skillMD("pdf-tools", "dup")}})
	wantCode(t, err, skilld.ECONFLICT)

	// Lenient keeps unknown keys as warnings.
	md := "---\nname: lenient\ndescription: d\nversion: 2\n---\n"
	_, err = e.svc.CreateSkill(ctx, e.member, service.CreateSkillParams{Files: map[string]string{"SKILL.md": md}})
	wantCode(t, err, skilld.EINVALID)
	l := must[*service.SkillView](t)(e.svc.CreateSkill(ctx, e.member, service.CreateSkillParams{Files: map[string]string{"SKILL.md": md}, SkillOptions: service.SkillOptions{Lenient: true}}))
	if len(l.Warnings) != 1 || !strings.Contains(l.Warnings[0].Message, "Unexpected fields") {
		t.Errorf("warnings %+v", l.Warnings)
	}
	page := must[*service.SkillPage](t)(e.svc.ListSkills(ctx, e.viewer, service.ListSkillsParams{PageSize: 2}))
	if page.Total != 3 || len(page.Items) != 2 || page.Page != 1 || page.Items[0].Name != "lenient" {
		t.Errorf("page %+v", page)
	}
	_, err = e.svc.ListSkills(ctx, e.viewer, service.ListSkillsParams{PageSize: 101})
	wantCode(t, err, skilld.EINVALID)
}

func testRefusedCreate(t *testing.T, open storetest.Opener) {
	e := newEnv(t, open, service.Config{}, nil)
	ctx := t.Context()
	many := map[string]string{"SKILL.md": skillMD("many", "d")}
	for i := range 200 {
		many[fmt.Sprintf("f%03d.txt", i)] = "x"
	}
	deep := map[string]string{"SKILL.md": skillMD("deep", "d"), strings.Repeat("d/", 10) + "f.txt": "x"}
	big := map[string]string{"SKILL.md": skillMD("big", "d"), "big.txt": strings.Repeat("x", 5<<20)}
	for _, tt := range []struct {
		name  string
		files map[string]string
		code  string
	}{
		{"no SKILL.md", map[string]string{"README.md": "x"}, skilld.EINVALID},
		{"no files", nil, skilld.EINVALID},
		{"invalid frontmatter", map[string]string{"SKILL.md": "no frontmatter", "other.txt": "unique bytes 1"}, skilld.EINVALID},
		{"unsafe path", map[string]string{"SKILL.md": skillMD("x", "d"), "../escape.sh": "unique bytes 2"}, skilld.EINVALID},
		{"201 files", many, skilld.ETOOLARGE},
		{"too deep", deep, skilld.EINVALID},
		{"over 5 MiB", big, skilld.ETOOLARGE},
	} {
		_, err := e.svc.CreateSkill(ctx, e.member, service.CreateSkillParams{Files: tt.files})
		if skilld.ErrorCode(err) != tt.code {
			t.Errorf("%s: %v, want code %s", tt.name, err, tt.code)
		}
	}
	// A conflict is found only in the transaction, after the blobs were
	// uploaded: they must be removed again.
	must[*service.SkillView](t)(e.svc.CreateSkill(ctx, e.member, service.CreateSkillParams{Files: map[string]string{"SKILL.md": skillMD("taken", "d")}}))
	before := e.blobCount(t)
	_, err := e.svc.CreateSkill(ctx, e.member, service.CreateSkillParams{Files: map[string]string{"SKILL.md": skillMD("taken", "other"), "new.txt": "new bytes"}})
	wantCode(t, err, skilld.ECONFLICT)
	if after := e.blobCount(t); after != before {
		t.Errorf("a refused create left %d blobs behind", after-before)
	}
	if page := must[*service.SkillPage](t)(e.svc.ListSkills(ctx, e.member, service.ListSkillsParams{})); page.Total != 1 {
		t.Errorf("%d skills after refused creates, want 1", page.Total)
	}
}

func testArchive(t *testing.T, open storetest.Opener) {
	e := newEnv(t, open, service.Config{}, nil)
	ctx := t.Context()
	archive := zipOf(t, map[string]string{"my-skill/SKILL.md": skillMD("my-skill", "Zipped"), "my-skill/ref.md": "ref", "__MACOSX/._x": "junk"})
	sk := must[*service.SkillView](t)(e.svc.CreateSkillFromArchive(ctx, e.member, service.CreateSkillFromArchiveParams{Archive: archive}))
	if sk.Name != "my-skill" || sk.SourceType != skilld.SourceZip {
		t.Errorf("from zip %+v", sk.Skill)
	}
	// The folder name must match the skill name (docs/SKILL-FORMAT.md).
	_, err := e.svc.CreateSkillFromArchive(ctx, e.member, service.CreateSkillFromArchiveParams{Archive: zipOf(t, map[string]string{"folder/SKILL.md": skillMD("other", "d")})})
	wantCode(t, err, skilld.EINVALID)
	_, err = e.svc.CreateSkillFromArchive(ctx, e.member, service.CreateSkillFromArchiveParams{Archive: []byte("garbage")})
	wantCode(t, err, skilld.EINVALID)
	_, err = e.svc.CreateSkillFromArchive(ctx, e.member, service.CreateSkillFromArchiveParams{Archive: zipOf(t, map[string]string{"x/../../evil": "x"})})
	wantCode(t, err, skilld.EINVALID)
}

func testVersions(t *testing.T, open storetest.Opener) {
	e := newEnv(t, open, service.Config{}, nil)
	ctx := t.Context()
	ref := service.SkillRef{ID: "notes"}
	must[*service.SkillView](t)(e.svc.CreateSkill(ctx, e.member, service.CreateSkillParams{Files: map[string]string{"SKILL.md": skillMD("notes", "v1")}}))
	v2 := must[*service.SkillView](t)(e.svc.ReplaceSkillFiles(ctx, e.member, service.ReplaceSkillFilesParams{SkillRef: ref,
		Files: map[string]string{"SKILL.md": skillMD("notes", "v2"), "extra.md": "x"}, ExpectedVersion: ptr(1), Message: "second"}))
	if v2.Version != 2 || v2.Description != "v2" || v2.Slug != "notes" {
		t.Fatalf("v2 %+v", v2.Skill)
	}
	_, err := e.svc.ReplaceSkillFiles(ctx, e.member, service.ReplaceSkillFilesParams{SkillRef: ref, Files: map[string]string{"SKILL.md": skillMD("notes", "stale")}, ExpectedVersion: ptr(1)})
	wantCode(t, err, skilld.ECONFLICT)
	// Anything but a version number is refused, not ignored.
	for _, bad := range []int{0, -1, -100} {
		_, err = e.svc.ReplaceSkillFiles(ctx, e.member, service.ReplaceSkillFilesParams{SkillRef: ref, Files: map[string]string{"SKILL.md": skillMD("notes", "x")}, ExpectedVersion: ptr(bad)})
		if wantCode(t, err, skilld.EINVALID); !strings.Contains(err.Error(), "expected_version") {
			t.Errorf("expected_version %d: %v", bad, err)
		}
	}
	_, err = e.svc.ReplaceSkillFiles(ctx, e.member, service.ReplaceSkillFilesParams{SkillRef: ref, Files: map[string]string{"README.md": "no skill"}})
	wantCode(t, err, skilld.EINVALID)
	// A content edit may rename the skill; the slug stays.
	v3 := must[*service.SkillView](t)(e.svc.ReplaceSkillFiles(ctx, e.member, service.ReplaceSkillFilesParams{SkillRef: ref, Files: map[string]string{"SKILL.md": skillMD("journal", "v3")}}))
	if v3.Name != "journal" || v3.Slug != "notes" || v3.Version != 3 {
		t.Errorf("v3 %+v", v3.Skill)
	}
	vs := must[*service.VersionList](t)(e.svc.ListSkillVersions(ctx, e.viewer, service.ListSkillVersionsParams{SkillRef: ref}))
	if len(vs.Items) != 3 || vs.Items[0].Number != 3 || vs.Items[1].Message != "second" {
		t.Errorf("versions %+v", vs.Items)
	}
	old := must[*service.VersionDetail](t)(e.svc.GetSkillVersion(ctx, e.viewer, service.GetSkillVersionParams{SkillRef: ref, Number: 2}))
	if len(old.Files) != 2 {
		t.Errorf("v2 files %+v", old.Files)
	}
	c := must[*service.SkillContent](t)(e.svc.GetSkillContent(ctx, e.viewer, service.GetSkillContentParams{SkillRef: ref, Version: 1}))
	if !strings.Contains(c.Content, "description: v1") {
		t.Errorf("v1 content %q", c.Content)
	}
	r := must[*service.SkillView](t)(e.svc.RestoreSkillVersion(ctx, e.member, service.RestoreSkillVersionParams{SkillRef: ref, Number: 1}))
	if r.Version != 4 || r.Digest != must[*service.VersionDetail](t)(e.svc.GetSkillVersion(ctx, e.viewer, service.GetSkillVersionParams{SkillRef: ref, Number: 1})).Digest || r.Name != "notes" {
		t.Errorf("restored %+v", r.Skill)
	}
	m := must[*service.SkillView](t)(e.svc.UpdateSkillMetadata(ctx, e.member, service.UpdateSkillMetadataParams{SkillRef: ref, Description: ptr("Edited")}))
	// A metadata edit is a version whose SKILL.md says it.
	if m.Description != "Edited" || m.Version != 5 {
		t.Errorf("metadata edit %+v", m.Skill)
	}
	if c := must[*service.SkillContent](t)(e.svc.GetSkillContent(ctx, e.viewer, service.GetSkillContentParams{SkillRef: ref})); !strings.Contains(c.Content, "description: Edited\n") || !strings.Contains(c.Content, "name: notes\n") {
		t.Errorf("the SKILL.md after a metadata edit:\n%s", c.Content)
	}
	mv := must[*service.SkillView](t)(e.svc.UpdateSkillMetadata(ctx, e.member, service.UpdateSkillMetadataParams{SkillRef: ref, Name: ptr("memo")}))
	if c := must[*service.SkillContent](t)(e.svc.GetSkillContent(ctx, e.viewer, service.GetSkillContentParams{SkillRef: ref})); mv.Name != "memo" || mv.Version != 6 || !strings.Contains(c.Content, "name: memo\n") {
		t.Errorf("a rename: %+v\n%s", mv.Skill, c.Content)
	}
	if same := must[*service.SkillView](t)(e.svc.UpdateSkillMetadata(ctx, e.member, service.UpdateSkillMetadataParams{SkillRef: ref, Name: ptr("memo")})); same.Version != 6 {
		t.Errorf("a rename to the same name made version %d", same.Version)
	}
	_, err = e.svc.UpdateSkillMetadata(ctx, e.member, service.UpdateSkillMetadataParams{SkillRef: ref, Name: ptr("Bad--Name")})
	wantCode(t, err, skilld.EINVALID)
	_, err = e.svc.UpdateSkillMetadata(ctx, e.member, service.UpdateSkillMetadataParams{SkillRef: ref, Description: ptr(strings.Repeat("x", 1025))})
	wantCode(t, err, skilld.EINVALID)
}

func ptr[T any](v T) *T { return &v }

func testRoles(t *testing.T, open storetest.Opener) {
	e := newEnv(t, open, service.Config{}, nil)
	ctx := t.Context()
	files := map[string]string{"SKILL.md": skillMD("s", "d")}
	_, err := e.svc.CreateSkill(ctx, e.viewer, service.CreateSkillParams{Files: files})
	wantCode(t, err, skilld.EFORBIDDEN)
	sk := must[*service.SkillView](t)(e.svc.CreateSkill(ctx, e.member, service.CreateSkillParams{Files: files}))
	_, err = e.svc.GetSkill(ctx, e.other, service.GetSkillParams{SkillRef: service.SkillRef{ID: sk.ID}})
	wantCode(t, err, skilld.ENOTFOUND)
	_, err = e.svc.In(ctx, e.other, "team")
	wantCode(t, err, skilld.ENOTFOUND)
	_, err = e.svc.In(ctx, e.other, "no-such-workspace")
	wantCode(t, err, skilld.ENOTFOUND)
	_, err = e.svc.CreateToken(ctx, e.member, service.CreateTokenParams{Name: "x", Role: skilld.RoleAdmin})
	wantCode(t, err, skilld.EFORBIDDEN)
	_, err = e.svc.CreateWorkspace(ctx, e.admin, service.CreateWorkspaceParams{Name: "nope"})
	wantCode(t, err, skilld.EFORBIDDEN)
	_, err = e.svc.CreateWorkspace(ctx, e.root, service.CreateWorkspaceParams{Name: "Bad Name"})
	wantCode(t, err, skilld.EINVALID)
	ws := must[*service.WorkspaceList](t)(e.svc.ListWorkspaces(ctx, e.member, service.ListWorkspacesParams{}))
	if len(ws.Items) != 1 || ws.Items[0].Name != "team" {
		t.Errorf("a member sees workspaces %+v", ws.Items)
	}
	// Revoked and expired tokens stop working.
	tok := must[*service.NewToken](t)(e.svc.CreateToken(ctx, e.admin, service.CreateTokenParams{Name: "temp", Role: skilld.RoleViewer, ExpiresIn: "1h"}))
	if err := e.svc.RevokeToken(ctx, e.admin, service.RevokeTokenParams{ID: tok.ID}); err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.Authenticate(ctx, tok.Secret)
	wantCode(t, err, skilld.EUNAUTHORIZED)
	_, err = e.svc.Authenticate(ctx, "skd_unknown")
	wantCode(t, err, skilld.EUNAUTHORIZED)
	later := service.New(e.db, e.blobs, nil, service.Config{Now: func() time.Time { return time.Now().Add(2 * time.Hour) }})
	tok2 := must[*service.NewToken](t)(e.svc.CreateToken(ctx, e.admin, service.CreateTokenParams{Name: "short", Role: skilld.RoleViewer, ExpiresIn: "1h"}))
	_, err = later.Authenticate(ctx, tok2.Secret)
	wantCode(t, err, skilld.EUNAUTHORIZED)
}

func testDeleteReleases(t *testing.T, open storetest.Opener) {
	e := newEnv(t, open, service.Config{}, nil)
	ctx := t.Context()
	shared := "shared reference text"
	a := must[*service.SkillView](t)(e.svc.CreateSkill(ctx, e.member, service.CreateSkillParams{Files: map[string]string{"SKILL.md": skillMD("a", "d"), "ref.md": shared}}))
	must[*service.SkillView](t)(e.svc.CreateSkill(ctx, e.member, service.CreateSkillParams{Files: map[string]string{"SKILL.md": skillMD("b", "d"), "ref.md": shared}}))
	must[*service.SkillView](t)(e.svc.ReplaceSkillFiles(ctx, e.member, service.ReplaceSkillFilesParams{SkillRef: service.SkillRef{ID: a.ID}, Files: map[string]string{"SKILL.md": skillMD("a", "v2")}}))
	if n := e.blobCount(t); n != 4 {
		t.Fatalf("%d blobs, want 4 (a v1, a v2, b, shared ref)", n)
	}
	if err := e.svc.DeleteSkill(ctx, e.member, service.DeleteSkillParams{SkillRef: service.SkillRef{ID: a.ID}}); err != nil {
		t.Fatal(err)
	}
	if n := e.blobCount(t); n != 2 {
		t.Errorf("%d blobs after deleting a, want b's 2 (shared ref kept)", n)
	}
	_, _, err := e.db.PackageGet(ctx, &store.PackageGetParams{Digest: a.Digest})
	wantCode(t, err, skilld.ENOTFOUND)
}

// TestLenientLengths: a workspace refuses a skill whose description is over
// the specification's 1,024 characters until an instance admin turns
// lenient_lengths on; then it is stored with a warning, and edits and
// renames keep it.
func TestLenientLengths(t *testing.T) {
	e := newEnv(t, storetest.Drivers(t)[0].Open, service.Config{}, nil)
	ctx := t.Context()
	long := strings.Repeat("Use when working with the Claude API. ", 28) // 1,064 characters
	files := map[string]string{"SKILL.md": "---\nname: claude-api\ndescription: " + strings.TrimSpace(long) + "\n---\nbody\n"}
	_, err := e.svc.CreateSkill(ctx, e.member, service.CreateSkillParams{Files: files})
	wantCode(t, err, skilld.EINVALID)
	if _, err := e.svc.UpdateWorkspace(ctx, e.member, service.UpdateWorkspaceParams{LenientLengths: ptr(true)}); skilld.ErrorCode(err) != skilld.EFORBIDDEN {
		t.Errorf("a member turned leniency on: %v", err)
	}
	root := must[service.Actor](t)(e.svc.In(ctx, e.root, "team"))
	if w := must[*skilld.Workspace](t)(e.svc.UpdateWorkspace(ctx, root, service.UpdateWorkspaceParams{LenientLengths: ptr(true)})); !w.LenientLengths {
		t.Fatalf("workspace %+v", w)
	}
	sk := must[*service.SkillView](t)(e.svc.CreateSkill(ctx, e.member, service.CreateSkillParams{Files: files}))
	if len(sk.Description) < 1025 || len(sk.Warnings) != 1 || !strings.Contains(sk.Warnings[0].Message, "Description exceeds 1024 character limit") {
		t.Errorf("stored %d characters with warnings %+v", len(sk.Description), sk.Warnings)
	}
	if m := must[*service.SkillView](t)(e.svc.UpdateSkillMetadata(ctx, e.member, service.UpdateSkillMetadataParams{SkillRef: service.SkillRef{ID: sk.ID}, Description: ptr(long + "More.")})); m.Version != 2 {
		t.Errorf("a longer description: %+v", m.Skill)
	}
	must[*skilld.Workspace](t)(e.svc.UpdateWorkspace(ctx, root, service.UpdateWorkspaceParams{LenientLengths: ptr(false)}))
	_, err = e.svc.UpdateSkillMetadata(ctx, e.member, service.UpdateSkillMetadataParams{SkillRef: service.SkillRef{ID: sk.ID}, Description: ptr(long)})
	wantCode(t, err, skilld.EINVALID)
}
