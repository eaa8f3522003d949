package httpapi_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/httpapi"
	"github.com/skilld/skilld/service"
)

// TestClientRoundTrip calls operations through the Go client: params go
// into the path, query and body exactly as the server decodes them, and
// results and errors come back typed.
func TestClientRoundTrip(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *testEnv) {
		ctx := t.Context()
		admin := &httpapi.Client{BaseURL: e.srv.URL, Token: e.admin, Workspace: "default"}
		var ws skilld.Workspace
		if err := admin.Call(ctx, "workspaces.create", service.CreateWorkspaceParams{Name: "team-b"}, &ws); err != nil || ws.Name != "team-b" {
			t.Fatalf("workspaces.create: %v %+v", err, ws)
		}
		admin.Workspace = "team-b"
		var tok service.NewToken
		if err := admin.Call(ctx, "tokens.create", &service.CreateTokenParams{Name: "m", Role: skilld.RoleMember}, &tok); err != nil {
			t.Fatal(err)
		}
		c := &httpapi.Client{BaseURL: e.srv.URL + "/", Token: tok.Secret, Workspace: ws.ID}

		var sk service.SkillView
		files := map[string]string{"SKILL.md": skillMD("alpha", "First."), "scripts/go.sh": "#!/bin/sh\necho go\n"}
		if err := c.Call(ctx, "skills.create", service.CreateSkillParams{Files: files}, &sk); err != nil || sk.Version != 1 {
			t.Fatalf("skills.create: %v %+v", err, sk)
		}
		if err := c.Call(ctx, "skills.edit_content", service.ReplaceSkillFilesParams{SkillRef: service.SkillRef{ID: sk.ID},
			Files: map[string]string{"SKILL.md": skillMD("alpha", "Second.")}, ExpectedVersion: new(1)}, &sk); err != nil || sk.Version != 2 {
			t.Fatalf("skills.edit_content: %v %+v", err, sk)
		}
		err := c.Call(ctx, "skills.edit_content", service.ReplaceSkillFilesParams{SkillRef: service.SkillRef{ID: sk.ID},
			Files: files, ExpectedVersion: new(1)}, nil)
		if skilld.ErrorCode(err) != skilld.ECONFLICT {
			t.Errorf("stale expected_version: %v", err)
		}
		var v service.VersionDetail
		if err := c.Call(ctx, "skills.versions.get", service.GetSkillVersionParams{SkillRef: service.SkillRef{ID: "alpha"}, Number: 1}, &v); err != nil || len(v.Files) != 2 {
			t.Errorf("skills.versions.get: %v %+v", err, v)
		}
		var content service.SkillContent
		if err := c.Call(ctx, "skills.get_content", service.GetSkillContentParams{SkillRef: service.SkillRef{ID: sk.ID}, Version: 1}, &content); err != nil ||
			content.Version != 1 || !bytes.Contains([]byte(content.Content), []byte("First.")) {
			t.Errorf("skills.get_content version 1: %v %+v", err, content)
		}

		// Streaming upload, list with query parameters, file download.
		zipped := zipOf(t, map[string]string{"beta/SKILL.md": skillMD("beta", "Zipped."), "beta/run.sh": "#!/bin/sh\n"})
		up, err := c.Upload(ctx, bytes.NewReader(zipped), int64(len(zipped)), service.SkillOptions{Description: "Uploaded."})
		if err != nil || up.Name != "beta" || up.Description != "Uploaded." || up.SourceType != skilld.SourceZip {
			t.Fatalf("Upload: %v %+v", err, up)
		}
		var page service.SkillPage
		if err := c.Call(ctx, "skills.list", service.ListSkillsParams{SourceType: skilld.SourceZip, PageSize: 1}, &page); err != nil ||
			page.Total != 1 || page.PageSize != 1 || page.Items[0].Name != "beta" {
			t.Errorf("skills.list: %v %+v", err, page)
		}
		body, f, err := c.GetFile(ctx, up.ID, "run.sh")
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(body)
		body.Close()
		if string(data) != "#!/bin/sh\n" || f.Size != 10 || !f.Exec || f.Digest == "" || f.Path != "run.sh" {
			t.Errorf("GetFile: %q %+v", data, f)
		}
		if _, _, err := c.GetFile(ctx, up.ID, "missing.md"); skilld.ErrorCode(err) != skilld.ENOTFOUND {
			t.Errorf("GetFile of a missing file: %v", err)
		}
		if err := c.Call(ctx, "skills.get_file", service.GetSkillFileParams{}, nil); err == nil {
			t.Error("Call of skills.get_file should point to GetFile")
		}

		// Catalog through Publish and install; imports of one and many.
		if err := admin.Call(ctx, "catalog.registries.create", service.CreateRegistryParams{Name: "acme", Trust: skilld.TrustVerified}, nil); err != nil {
			t.Fatal(err)
		}
		item, err := admin.Publish(ctx, "acme", bytes.NewReader(zipped), int64(len(zipped)), service.SkillOptions{})
		if err != nil || item.Name != "beta" || item.Version != 1 {
			t.Fatalf("Publish: %v %+v", err, item)
		}
		if _, err := c.Publish(ctx, "acme", bytes.NewReader(zipped), int64(len(zipped)), service.SkillOptions{}); skilld.ErrorCode(err) != skilld.EFORBIDDEN {
			t.Errorf("Publish by a member: %v", err)
		}
		e.github.addRepo(t, "o", "r", map[string]string{"one/SKILL.md": skillMD("one", "One."), "two/SKILL.md": skillMD("two", "Two.")})
		var imp service.ImportResult
		if err := c.Call(ctx, "skills.import_github", service.ImportGitHubParams{URL: "https://github.com/o/r/tree/main/one"}, &imp); err != nil || len(imp.Items) != 1 || imp.Items[0].Name != "one" {
			t.Errorf("import of one: %v %+v", err, imp)
		}
		imp = service.ImportResult{}
		err = c.Call(ctx, "skills.import_github", service.ImportGitHubParams{URL: "https://github.com/o/r"}, &imp)
		if skilld.ErrorCode(err) != skilld.EINVALID && skilld.ErrorCode(err) != skilld.ECONFLICT {
			t.Errorf("import of an ambiguous repository: %v", err)
		}

		// Errors keep their code, message and details.
		err = c.Call(ctx, "skills.get", service.GetSkillParams{SkillRef: service.SkillRef{ID: "nope"}}, &sk)
		var se *skilld.Error
		if !errors.As(err, &se) || se.Code != skilld.ENOTFOUND || se.Message == "" {
			t.Errorf("skills.get of a missing skill: %#v", err)
		}
		err = c.Call(ctx, "skills.create", service.CreateSkillParams{Files: map[string]string{"SKILL.md": "no frontmatter"}}, nil)
		if !errors.As(err, &se) || se.Code != skilld.EINVALID || len(se.Details) == 0 {
			t.Errorf("invalid SKILL.md: %#v", err)
		}
		if err := (&httpapi.Client{BaseURL: e.srv.URL, Token: tok.Secret}).Call(ctx, "skills.list", nil, &page); skilld.ErrorCode(err) != skilld.EINVALID {
			t.Errorf("no workspace: %v", err)
		}
		if err := (&httpapi.Client{BaseURL: "http://127.0.0.1:1", Token: "x", Workspace: "w"}).Call(ctx, "skills.list", nil, &page); skilld.ErrorCode(err) != skilld.EUNAVAILABLE {
			t.Errorf("unreachable server: %v", err)
		}
		if err := c.Call(ctx, "skills.list", service.GetSkillParams{}, &page); err == nil {
			t.Error("params of the wrong type were sent")
		}
		if err := c.Call(ctx, "skills.delete", service.DeleteSkillParams{SkillRef: service.SkillRef{ID: sk.ID}}, nil); err != nil {
			t.Errorf("skills.delete: %v", err)
		}
	})
}
