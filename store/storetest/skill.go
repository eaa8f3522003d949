package storetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

func ptr[T any](v T) *T { return &v }

func testSkills(t *testing.T, open Opener) {
	s := open(t)
	ws := newWorkspace(t, s, "w")
	sk := must[*skilld.Skill](t)(s.SkillCreate(ctx(t), &store.SkillCreateParams{
		WorkspaceID: ws.ID, Name: "PDF Reader", Description: "Reads PDFs", SourceType: skilld.SourceGitHub,
		SourceURL: "https://github.com/o/r", Registry: "github", Trust: skilld.TrustCommunity, CreatedBy: "ada",
	}))
	if sk.Slug != "pdf-reader" || sk.Version != 0 || sk.SourceType != skilld.SourceGitHub || sk.Registry != "github" ||
		sk.Trust != skilld.TrustCommunity || sk.CreatedBy != "ada" || sk.UpdatedBy != "ada" || sk.CatalogItemID != "" {
		t.Fatalf("created %+v", sk)
	}
	_, err := s.SkillCreate(ctx(t), &store.SkillCreateParams{WorkspaceID: ws.ID, Name: "PDF Reader", Description: "x", SourceType: skilld.SourceContent})
	wantCode(t, err, skilld.ECONFLICT)
	_, err = s.SkillCreate(ctx(t), &store.SkillCreateParams{WorkspaceID: ws.ID, Name: "bad", Description: "x", SourceType: "ftp"})
	wantCode(t, err, skilld.EINVALID)

	for _, get := range []store.SkillGetParams{{ID: sk.ID}, {Name: "PDF Reader"}, {Slug: "pdf-reader"}} {
		get.WorkspaceID = ws.ID
		if got := must[*skilld.Skill](t)(s.SkillGet(ctx(t), &get)); got.ID != sk.ID || !got.CreatedAt.Equal(sk.CreatedAt) {
			t.Errorf("get %+v = %+v", get, got)
		}
	}

	// A rename keeps the slug; the old name is free again.
	up := must[*skilld.Skill](t)(s.SkillUpdate(ctx(t), &store.SkillUpdateParams{
		WorkspaceID: ws.ID, ID: sk.ID, Name: ptr("Document Reader"), Description: ptr("Reads documents"), UpdatedBy: "bob",
	}))
	if up.Name != "Document Reader" || up.Slug != "pdf-reader" || up.Description != "Reads documents" || up.UpdatedBy != "bob" || up.CreatedBy != "ada" {
		t.Errorf("updated %+v", up)
	}
	if up.UpdatedAt.Before(sk.UpdatedAt) {
		t.Error("updated_at went back")
	}
	second := newSkill(t, s, ws.ID, "PDF Reader")
	if second.Slug != "pdf-reader-2" {
		t.Errorf("slug of a new skill taking the old name = %q", second.Slug)
	}
	_, err = s.SkillUpdate(ctx(t), &store.SkillUpdateParams{WorkspaceID: ws.ID, ID: sk.ID, Name: ptr("PDF Reader")})
	wantCode(t, err, skilld.ECONFLICT)
	_, err = s.SkillUpdate(ctx(t), &store.SkillUpdateParams{WorkspaceID: ws.ID, ID: "missing", Name: ptr("x")})
	wantCode(t, err, skilld.ENOTFOUND)

	if err := s.SkillDelete(ctx(t), &store.SkillDeleteParams{WorkspaceID: ws.ID, ID: sk.ID}); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.SkillDelete(ctx(t), &store.SkillDeleteParams{WorkspaceID: ws.ID, ID: sk.ID}), skilld.ENOTFOUND)
	_, err = s.SkillGet(ctx(t), &store.SkillGetParams{WorkspaceID: ws.ID, ID: sk.ID})
	wantCode(t, err, skilld.ENOTFOUND)
}

func testSlugs(t *testing.T, open Opener) {
	s := open(t)
	ws := newWorkspace(t, s, "w")
	other := newWorkspace(t, s, "other")
	for _, tt := range []struct{ ws, name, slug string }{
		{ws.ID, "Deploy API", "deploy-api"},
		{ws.ID, "deploy_api", "deploy-api-2"},
		{ws.ID, "deploy--api!", "deploy-api-3"},
		{other.ID, "DEPLOY API", "deploy-api"}, // slugs are per workspace
		{ws.ID, "навык", "item"},
		{ws.ID, "技能", "item-2"},
		{ws.ID, "Café", "cafe"},
		{ws.ID, strings.Repeat("long name ", 20), strings.TrimRight(strings.Repeat("long-name-", 10), "-")},
	} {
		sk := newSkill(t, s, tt.ws, tt.name)
		if sk.Slug != tt.slug {
			t.Errorf("slug of %q = %q, want %q", tt.name, sk.Slug, tt.slug)
		}
	}
}

// testSlugExhaustion fills deploy-api, deploy-api-2 … deploy-api-999 and
// expects the next skill with that slug to be refused clearly.
func testSlugExhaustion(t *testing.T, open Opener) {
	if testing.Short() {
		t.Skip("creates 1,000 skills")
	}
	s := open(t)
	ws := newWorkspace(t, s, "w")
	err := s.Tx(ctx(t), func(q store.Querier) error {
		for i := range store.MaxSlugSuffix {
			sk := newSkill(t, q, ws.ID, "deploy"+strings.Repeat(" ", i+1)+"api")
			if want := store.SlugCandidate("deploy-api", i+1); sk.Slug != want {
				return fmt.Errorf("skill %d got slug %q, want %q", i, sk.Slug, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.SkillCreate(ctx(t), &store.SkillCreateParams{WorkspaceID: ws.ID, Name: "Deploy_API", Description: "d", SourceType: skilld.SourceContent})
	wantCode(t, err, skilld.ECONFLICT)
	if !strings.Contains(err.Error(), "deploy-api-999") {
		t.Errorf("message should name the last slug tried: %v", err)
	}
}

// testLookalikeNames: a workspace holds skill names unique by their UTS #39
// skeleton, and the refusal names the skill in the way.
func testLookalikeNames(t *testing.T, open Opener) {
	s := open(t)
	ws := newWorkspace(t, s, "w")
	other := newWorkspace(t, s, "other")
	orig := newSkill(t, s, ws.ID, "pdf-tools")
	for _, name := range []string{"pdf-t\u043e\u043els", "pdf-t\u03bf\u03bfls", "pdf-too1s"} {
		_, err := s.SkillCreate(ctx(t), &store.SkillCreateParams{WorkspaceID: ws.ID, Name: name, Description: "x", SourceType: skilld.SourceContent})
		wantCode(t, err, skilld.ECONFLICT)
		if !strings.Contains(err.Error(), `"pdf-tools"`) || !strings.Contains(err.Error(), "confusable") {
			t.Errorf("creating %q: %v; want the message to name pdf-tools as confusable", name, err)
		}
	}
	_, err := s.SkillCreate(ctx(t), &store.SkillCreateParams{WorkspaceID: ws.ID, Name: "pdf-tools", Description: "x", SourceType: skilld.SourceContent})
	if wantCode(t, err, skilld.ECONFLICT); !strings.Contains(err.Error(), "already exists") {
		t.Errorf("exact duplicate: %v", err)
	}
	// Other workspaces are not affected, names that only share letters
	// are fine, and Unicode names stay valid.
	newSkill(t, s, other.ID, "pdf-t\u043e\u043els")
	for _, name := range []string{"pdf-tool", "данные", "数据处理", "daнные"} {
		newSkill(t, s, ws.ID, name)
	}
	_, err = s.SkillCreate(ctx(t), &store.SkillCreateParams{WorkspaceID: ws.ID, Name: "данныe", Description: "x", SourceType: skilld.SourceContent})
	wantCode(t, err, skilld.ECONFLICT)

	// Renames are held to the same rule, except a skill may take a
	// lookalike of its own name.
	tool := must[*skilld.Skill](t)(s.SkillGet(ctx(t), &store.SkillGetParams{WorkspaceID: ws.ID, Name: "pdf-tool"}))
	_, err = s.SkillUpdate(ctx(t), &store.SkillUpdateParams{WorkspaceID: ws.ID, ID: tool.ID, Name: ptr("pdf-t\u03bf\u03bfls")})
	if wantCode(t, err, skilld.ECONFLICT); !strings.Contains(err.Error(), `"pdf-tools"`) {
		t.Errorf("rename onto a lookalike: %v", err)
	}
	up := must[*skilld.Skill](t)(s.SkillUpdate(ctx(t), &store.SkillUpdateParams{WorkspaceID: ws.ID, ID: orig.ID, Name: ptr("pdf-t\u03bf\u03bfls")}))
	if up.Name != "pdf-t\u03bf\u03bfls" {
		t.Errorf("self rename: %+v", up)
	}
	// Deleting a skill frees its skeleton.
	if err := s.SkillDelete(ctx(t), &store.SkillDeleteParams{WorkspaceID: ws.ID, ID: orig.ID}); err != nil {
		t.Fatal(err)
	}
	newSkill(t, s, ws.ID, "pdf-tools")
}
