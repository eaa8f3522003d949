package skilltools_test

import (
	"archive/zip"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/tool"
	"github.com/skilld/skilld/blob/fsblob"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/skilltools"
	"github.com/skilld/skilld/store/storetest"
)

// wantTools are the toolset's tools, as agents and held-out checks know them.
var wantTools = []string{
	"skills_list", "skills_get", "skills_create", "skills_create_from_archive", "skills_import_github",
	"skills_edit_metadata", "skills_edit_content", "skills_delete", "skills_list_files", "skills_get_file", "skills_install",
}

type fixture struct {
	svc   *service.Service
	root  service.Actor
	tools map[string]*tool.Tool
}

func newFixture(t *testing.T, role skilld.Role) *fixture {
	t.Helper()
	blobs, err := fsblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(storetest.OpenSQLite(t), blobs, nil, service.Config{})
	secret, err := svc.Bootstrap(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	root, err := svc.Authenticate(t.Context(), secret)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := svc.CreateToken(t.Context(), root, service.CreateTokenParams{Name: "agent", Role: role})
	if err != nil {
		t.Fatal(err)
	}
	actor, err := svc.Authenticate(t.Context(), tok.Secret)
	if err != nil {
		t.Fatal(err)
	}
	list, err := skilltools.New(svc, actor)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{svc: svc, root: root, tools: map[string]*tool.Tool{}}
	for _, tl := range list {
		f.tools[tl.Name] = tl
	}
	return f
}

// call runs a tool with args given as a Go value and decodes its JSON
// result into out (when non-nil).
func (f *fixture) call(t *testing.T, name string, args any, out any) error {
	t.Helper()
	tl, ok := f.tools[name]
	if !ok {
		t.Fatalf("no tool %q", name)
	}
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	text, err := tl.Call(t.Context(), raw)
	if err != nil {
		return err
	}
	if out != nil {
		if err := json.Unmarshal([]byte(text), out); err != nil {
			t.Fatalf("%s result is not JSON: %v\n%s", name, err, text)
		}
	}
	return nil
}

func TestToolNames(t *testing.T) {
	f := newFixture(t, skilld.RoleMember)
	var got []string
	for name, tl := range f.tools {
		got = append(got, name)
		if tl.Description == "" || tl.Schema == nil || tl.Schema.Type != "object" {
			t.Errorf("tool %s: description %q, schema %+v", name, tl.Description, tl.Schema)
		}
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(wantTools))
	if !slices.Equal(got, want) {
		t.Errorf("tools %v, want %v", got, want)
	}
}

func TestToolset(t *testing.T) {
	f := newFixture(t, skilld.RoleMember)
	md := "---\nname: notes\ndescription: Keep notes\n---\n# Notes\n"
	var sk service.SkillView
	if err := f.call(t, "skills_create", map[string]any{"files": map[string]string{"SKILL.md": md, "tpl.md": "template"}}, &sk); err != nil {
		t.Fatal(err)
	}
	if sk.Name != "notes" || sk.Version != 1 {
		t.Fatalf("created %+v", sk.Skill)
	}
	var got service.SkillView
	if err := f.call(t, "skills_get", map[string]any{"id": "notes"}, &got); err != nil || got.ID != sk.ID {
		t.Fatalf("get by slug: %+v %v", got.Skill, err)
	}
	var page service.SkillPage
	if err := f.call(t, "skills_list", map[string]any{"search": "NOTES"}, &page); err != nil || page.Total != 1 || page.Items[0].Kind != "skill" {
		t.Fatalf("list: %+v %v", page, err)
	}
	if err := f.call(t, "skills_edit_metadata", map[string]any{"id": sk.ID, "description": "Notes, better"}, &got); err != nil || got.Description != "Notes, better" {
		t.Fatalf("edit metadata: %+v %v", got.Skill, err)
	}
	if err := f.call(t, "skills_edit_content", map[string]any{"id": sk.ID, "files": map[string]string{"SKILL.md": md}, "expected_version": 2}, &got); err != nil || got.Version != 3 { // the metadata edit made version 2
		t.Fatalf("edit content: %+v %v", got.Skill, err)
	}
	var files service.SkillFiles
	if err := f.call(t, "skills_list_files", map[string]any{"id": sk.ID, "version": 1}, &files); err != nil || len(files.Files) != 2 {
		t.Fatalf("list files v1: %+v %v", files, err)
	}
	var content skilltools.FileContent
	if err := f.call(t, "skills_get_file", map[string]any{"id": sk.ID, "path": "SKILL.md"}, &content); err != nil || content.Content != md || content.Encoding != "utf-8" {
		t.Fatalf("get file: %+v %v", content, err)
	}

	// Archives come base64-encoded; a binary file comes back base64 too.
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("bin-skill/SKILL.md")
	w.Write([]byte("---\nname: bin-skill\ndescription: has a binary\n---\n"))
	w, _ = zw.Create("bin-skill/logo.png")
	w.Write([]byte{0x89, 'P', 'N', 'G', 0xff, 0x00})
	zw.Close()
	if err := f.call(t, "skills_create_from_archive", map[string]any{"archive": base64.StdEncoding.EncodeToString(buf.Bytes())}, &got); err != nil || got.Name != "bin-skill" {
		t.Fatalf("from archive: %+v %v", got.Skill, err)
	}
	if err := f.call(t, "skills_get_file", map[string]any{"id": "bin-skill", "path": "logo.png"}, &content); err != nil || content.Encoding != "base64" || content.Content != "iVBOR/8A" {
		t.Fatalf("binary file: %+v %v", content, err)
	}

	if _, err := f.svc.CreateRegistry(t.Context(), f.root, service.CreateRegistryParams{Name: "acme", Trust: skilld.TrustVerified}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.PublishCatalogItem(t.Context(), f.root, service.PublishCatalogItemParams{Registry: "acme", Archive: buf.Bytes()}); err != nil {
		t.Fatal(err)
	}
	err := f.call(t, "skills_install", map[string]any{"item": "acme/bin-skill"}, &got)
	if skilld.ErrorCode(err) != skilld.ECONFLICT {
		t.Errorf("installing over a skill of the same name: %v", err)
	}
	if err := f.call(t, "skills_delete", map[string]any{"id": "bin-skill"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := f.call(t, "skills_install", map[string]any{"item": "acme/bin-skill"}, &got); err != nil || got.CatalogItem != "acme/bin-skill" {
		t.Fatalf("install: %+v %v", got.Skill, err)
	}
	err = f.call(t, "skills_import_github", map[string]any{"github_url": "https://github.com/o/r"}, nil)
	if skilld.ErrorCode(err) != skilld.EUNAVAILABLE || !strings.Contains(err.Error(), "not configured") {
		t.Errorf("import without GitHub configured: %v", err)
	}
}

func TestToolsetRole(t *testing.T) {
	f := newFixture(t, skilld.RoleViewer)
	err := f.call(t, "skills_create", map[string]any{"files": map[string]string{"SKILL.md": "---\nname: x\ndescription: d\n---\n"}}, nil)
	if skilld.ErrorCode(err) != skilld.EFORBIDDEN {
		t.Errorf("a viewer agent creating a skill: %v", err)
	}
	var page service.SkillPage
	if err := f.call(t, "skills_list", map[string]any{}, &page); err != nil {
		t.Errorf("a viewer agent listing: %v", err)
	}
}
