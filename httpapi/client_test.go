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
		ws, err := httpapi.Call(ctx, admin, service.OpWorkspacesCreate, service.CreateWorkspaceParams{Name: "team-b"})
		if err != nil || ws.Name != "team-b" {
			t.Fatalf("workspaces.create: %v %+v", err, ws)
		}
		admin.Workspace = "team-b"
		tok, err := httpapi.Call(ctx, admin, service.OpTokensCreate, service.CreateTokenParams{Name: "m", Role: skilld.RoleMember})
		if err != nil {
			t.Fatal(err)
		}
		c := &httpapi.Client{BaseURL: e.srv.URL + "/", Token: tok.Secret, Workspace: ws.ID}

		files := map[string]string{"SKILL.md": skillMD("alpha", "First."), "scripts/go.sh": "#!/bin/sh\necho go\n"}
		sk, err := httpapi.Call(ctx, c, service.OpSkillsCreate, service.CreateSkillParams{Files: files})
		if err != nil || sk.Version != 1 {
			t.Fatalf("skills.create: %v %+v", err, sk)
		}
		sk, err = httpapi.Call(ctx, c, service.OpSkillsEditContent, service.ReplaceSkillFilesParams{SkillRef: service.SkillRef{ID: sk.ID},
			Files: map[string]string{"SKILL.md": skillMD("alpha", "Second.")}, ExpectedVersion: new(1)})
		if err != nil || sk.Version != 2 {
			t.Fatalf("skills.edit_content: %v %+v", err, sk)
		}
		_, err = httpapi.Call(ctx, c, service.OpSkillsEditContent, service.ReplaceSkillFilesParams{SkillRef: service.SkillRef{ID: sk.ID},
			Files: files, ExpectedVersion: new(1)})
		if skilld.ErrorCode(err) != skilld.ECONFLICT {
			t.Errorf("stale expected_version: %v", err)
		}
		v, err := httpapi.Call(ctx, c, service.OpSkillsVersionsGet, service.GetSkillVersionParams{SkillRef: service.SkillRef{ID: "alpha"}, Number: 1})
		if err != nil || len(v.Files) != 2 {
			t.Errorf("skills.versions.get: %v %+v", err, v)
		}
		content, err := httpapi.Call(ctx, c, service.OpSkillsGetContent, service.GetSkillContentParams{SkillRef: service.SkillRef{ID: sk.ID}, Version: 1})
		if err != nil || content.Version != 1 || !bytes.Contains([]byte(content.Content), []byte("First.")) {
			t.Errorf("skills.get_content version 1: %v %+v", err, content)
		}

		// Streaming upload, list with query parameters, file download.
		zipped := zipOf(t, map[string]string{"beta/SKILL.md": skillMD("beta", "Zipped."), "beta/run.sh": "#!/bin/sh\n"})
		up, err := c.Upload(ctx, bytes.NewReader(zipped), int64(len(zipped)), service.SkillOptions{Description: "Uploaded."})
		if err != nil || up.Name != "beta" || up.Description != "Uploaded." || up.SourceType != skilld.SourceZip {
			t.Fatalf("Upload: %v %+v", err, up)
		}
		page, err := httpapi.Call(ctx, c, service.OpSkillsList, service.ListSkillsParams{SourceType: skilld.SourceZip, PageSize: 1})
		if err != nil || page.Total != 1 || page.PageSize != 1 || page.Items[0].Name != "beta" {
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
		if _, err := httpapi.Call(ctx, c, service.OpSkillsGetFile, service.GetSkillFileParams{}); err == nil {
			t.Error("Call of skills.get_file should point to GetFile")
		}

		// Catalog through Publish and install; imports of one and many.
		if _, err := httpapi.Call(ctx, admin, service.OpCatalogRegistriesCreate, service.CreateRegistryParams{Name: "acme", Trust: skilld.TrustVerified}); err != nil {
			t.Fatal(err)
		}
		item, err := admin.Publish(ctx, "acme", bytes.NewReader(zipped), int64(len(zipped)), service.SkillOptions{}, "")
		if err != nil || item.Name != "beta" || item.Version != 1 {
			t.Fatalf("Publish: %v %+v", err, item)
		}
		if _, err := c.Publish(ctx, "acme", bytes.NewReader(zipped), int64(len(zipped)), service.SkillOptions{}, ""); skilld.ErrorCode(err) != skilld.EFORBIDDEN {
			t.Errorf("Publish by a member: %v", err)
		}
		e.github.addRepo(t, "o", "r", map[string]string{"one/SKILL.md": skillMD("one", "One."), "two/SKILL.md": skillMD("two", "Two.")})
		imp, err := httpapi.Call(ctx, c, service.OpSkillsImportGitHub, service.ImportGitHubParams{URL: "https://github.com/o/r/tree/main/one"})
		if err != nil || len(imp.Items) != 1 || imp.Items[0].Name != "one" {
			t.Errorf("import of one: %v %+v", err, imp)
		}
		_, err = httpapi.Call(ctx, c, service.OpSkillsImportGitHub, service.ImportGitHubParams{URL: "https://github.com/o/r"})
		if skilld.ErrorCode(err) != skilld.EINVALID && skilld.ErrorCode(err) != skilld.ECONFLICT {
			t.Errorf("import of an ambiguous repository: %v", err)
		}

		// Errors keep their code, message and details.
		_, err = httpapi.Call(ctx, c, service.OpSkillsGet, service.GetSkillParams{SkillRef: service.SkillRef{ID: "nope"}})
		var se *skilld.Error
		if !errors.As(err, &se) || se.Code != skilld.ENOTFOUND || se.Message == "" {
			t.Errorf("skills.get of a missing skill: %#v", err)
		}
		_, err = httpapi.Call(ctx, c, service.OpSkillsCreate, service.CreateSkillParams{Files: map[string]string{"SKILL.md": "no frontmatter"}})
		if !errors.As(err, &se) || se.Code != skilld.EINVALID || len(se.Details) == 0 {
			t.Errorf("invalid SKILL.md: %#v", err)
		}
		if _, err := httpapi.Call(ctx, &httpapi.Client{BaseURL: e.srv.URL, Token: tok.Secret}, service.OpSkillsList, service.ListSkillsParams{}); skilld.ErrorCode(err) != skilld.EINVALID {
			t.Errorf("no workspace: %v", err)
		}
		if _, err := httpapi.Call(ctx, &httpapi.Client{BaseURL: "http://127.0.0.1:1", Token: "x", Workspace: "w"}, service.OpSkillsList, service.ListSkillsParams{}); skilld.ErrorCode(err) != skilld.EUNAVAILABLE {
			t.Errorf("unreachable server: %v", err)
		}
		if _, err := httpapi.Call(ctx, c, service.OpSkillsDelete, service.DeleteSkillParams{SkillRef: service.SkillRef{ID: sk.ID}}); err != nil {
			t.Errorf("skills.delete: %v", err)
		}
	})
}
