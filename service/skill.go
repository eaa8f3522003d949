package service

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/skillmd"
	"github.com/skilld/skilld/store"
)

// SkillView is a skill as the API and the toolset show it.
type SkillView struct {
	*skilld.Skill
	UpdateAvailable bool `json:"update_available"`
	// Warnings are the validator's warnings when the skill was created or
	// edited in lenient mode.
	Warnings []skilld.Detail `json:"warnings,omitempty"`
	// Existing says that nothing was created: the item was already
	// installed and this is that skill (the API answers 200, not 201).
	Existing bool `json:"existing,omitempty"`
	// Unchanged says that a change (an edit, a restore, an update) would
	// have changed nothing, so no version was made: this is the skill at
	// its current version.
	Unchanged bool `json:"unchanged,omitempty"`
	// EvalGate are the trigger eval comparisons a catalog update made
	// before it went through.
	EvalGate []EvalComparison `json:"eval_gate,omitempty"`
	// Signature, on skills.get of a skill installed from the catalog, is
	// what verifying its catalog version's bundle against the skill's
	// current package finds (an edited skill no longer verifies).
	Signature *skilld.SignatureStatus `json:"signature,omitempty"`
}

// AlreadyExisted reports whether an operation that creates returned
// something that was there before it.
func (v *SkillView) AlreadyExisted() bool { return v.Existing || v.Unchanged }

func view(s *skilld.Skill, warnings []skilld.Detail) *SkillView {
	return &SkillView{Skill: s, UpdateAvailable: s.UpdateAvailable(), Warnings: warnings}
}

// SkillRef names a skill of the actor's workspace by ID or slug.
type SkillRef struct {
	ID string `json:"id" path:"id" jsonschema:"the skill's ID or slug"`
}

// skill finds a skill of the actor's workspace by ID, then by slug.
func (s *Service) skill(ctx context.Context, a Actor, ref string) (*skilld.Skill, error) {
	if strings.TrimSpace(ref) == "" {
		return nil, invalidField("id", "skill id is required")
	}
	sk, err := s.db.SkillGet(ctx, &store.SkillGetParams{WorkspaceID: a.WorkspaceID, ID: ref})
	if skilld.ErrorCode(err) == skilld.ENOTFOUND {
		sk, err = s.db.SkillGet(ctx, &store.SkillGetParams{WorkspaceID: a.WorkspaceID, Slug: ref})
	}
	if skilld.ErrorCode(err) == skilld.ENOTFOUND {
		return nil, skilld.Errorf(skilld.ENOTFOUND, "skill %q not found in this workspace", ref)
	}
	return sk, err
}

type GetSkillParams struct {
	SkillRef
}

// GetSkill returns one skill (viewers and up).
func (s *Service) GetSkill(ctx context.Context, a Actor, p GetSkillParams) (*SkillView, error) {
	if err := a.can(skilld.RoleViewer); err != nil {
		return nil, err
	}
	sk, err := s.skill(ctx, a, p.ID)
	if err != nil {
		return nil, err
	}
	v := view(sk, nil)
	if sk.CatalogItemID != "" && sk.CatalogVersion > 0 {
		sp, err := s.catalogSigned(sk.CatalogItemID, sk.CatalogVersion, sk.Digest)(ctx)
		if err != nil {
			return nil, err
		}
		v.Signature = sp.status()
	}
	return v, nil
}

type ListSkillsParams struct {
	Search         string            `json:"search,omitempty" query:"search" jsonschema:"case-insensitive text to find in names and descriptions"`
	SourceType     skilld.SourceType `json:"source_type,omitempty" query:"source_type" jsonschema:"content, zip, github, path or catalog"`
	IncludeCatalog bool              `json:"include_catalog,omitempty" query:"include_catalog" jsonschema:"also list catalog items this workspace has not installed, after its own skills"`
	Page           int               `json:"page,omitempty" query:"page" jsonschema:"page number, from 1"`
	PageSize       int               `json:"page_size,omitempty" query:"page_size" jsonschema:"items per page, at most 100 (default 50)"`
	PageToken      string            `json:"page_token,omitempty" query:"page_token" jsonschema:"the next_page_token of the previous page: the next page, as fast at any depth as the first (instead of page)"`
}

// SkillListItem is a workspace skill (Kind "skill") or a catalog item the
// workspace could install (Kind "catalog", in CatalogItem).
type SkillListItem struct {
	Kind string `json:"kind"`
	*SkillView
	CatalogItem *skilld.CatalogItem `json:"catalog_item,omitempty"`
}

// SkillPage is one page of a skill list. Lists never carry SKILL.md bodies.
type SkillPage struct {
	Items []SkillListItem `json:"items"`
	Total int             `json:"total"`
	// Page is the page number; 0 for a page reached by page_token.
	Page     int `json:"page"`
	PageSize int `json:"page_size"`
	// NextPageToken, when there may be more, gets the next page with
	// page_token at the cost of the first at any depth.
	NextPageToken string `json:"next_page_token,omitempty"`

	encodings *encodings // set on a cached page
}

// ListSkills pages through the workspace's skills by name, then, with
// IncludeCatalog, the catalog items it has not installed. The page may be
// one kept for the same query and shared with other callers: it must not
// be changed.
func (s *Service) ListSkills(ctx context.Context, a Actor, p ListSkillsParams) (*SkillPage, error) {
	if err := a.can(skilld.RoleViewer); err != nil {
		return nil, err
	}
	if p.SourceType != "" && !p.SourceType.Valid() {
		return nil, invalidField("source_type", "source_type must be content, zip, github, path or catalog, not %q", p.SourceType)
	}
	if err := s.limitSearches(a, p.Search); err != nil {
		return nil, err
	}
	pg, norm, err := Page{Page: p.Page, PageSize: p.PageSize}.normalize()
	if err != nil {
		return nil, err
	}
	lp := &store.SkillListParams{WorkspaceID: a.WorkspaceID, Search: p.Search, SourceType: p.SourceType, IncludeCatalog: p.IncludeCatalog, Page: pg}
	query := filterDigest(a.WorkspaceID, p.Search, p.SourceType, p.IncludeCatalog)
	if p.PageToken != "" {
		if p.Page > 1 {
			return nil, invalidField("page_token", "give page or page_token, not both")
		}
		key, err := decodePageToken(p.PageToken, "skills", query, 3)
		if err != nil {
			return nil, err
		}
		lp.After = &store.SkillListCursor{Catalog: key[0] == "catalog", Registry: key[1], Name: key[2]}
		norm.Page = 0
	}
	return s.skillPage(ctx, lp, func(res *store.SkillListResult) *SkillPage {
		out := &SkillPage{Items: make([]SkillListItem, len(res.Items)), Total: res.Total, Page: norm.Page, PageSize: norm.PageSize}
		if n := len(res.Items); n == norm.PageSize && (p.PageToken != "" || pg.Offset+n < res.Total) {
			last := res.Items[n-1]
			if last.Skill != nil {
				out.NextPageToken = encodePageToken("skills", query, "skill", "", last.Skill.Name)
			} else {
				out.NextPageToken = encodePageToken("skills", query, "catalog", last.Catalog.Registry, last.Catalog.Name)
			}
		}
		for i, it := range res.Items {
			if it.Skill != nil {
				out.Items[i] = SkillListItem{Kind: "skill", SkillView: view(it.Skill, nil)}
			} else {
				out.Items[i] = SkillListItem{Kind: "catalog", CatalogItem: it.Catalog}
			}
		}
		return out
	})
}

type UpdateSkillMetadataParams struct {
	SkillRef
	Name        *string `json:"name,omitempty" jsonschema:"new name; the slug does not change"`
	Description *string `json:"description,omitempty" jsonschema:"new description, at most 1024 characters"`
}

// UpdateSkillMetadata renames a skill or changes its description (members
// and up). The slug never changes; the name must still be a valid skill
// name and unique in the workspace. The change is a new version whose
// SKILL.md says it, so that the skill's files never disagree with its
// name: what MCP, the discovery archive and a pulled folder serve is what
// the catalog shows.
func (s *Service) UpdateSkillMetadata(ctx context.Context, a Actor, p UpdateSkillMetadataParams) (*SkillView, error) {
	if err := a.can(skilld.RoleMember); err != nil {
		return nil, err
	}
	sk, err := s.skill(ctx, a, p.ID)
	if err != nil {
		return nil, err
	}
	long, err := s.lenientLengths(ctx, a)
	if err != nil {
		return nil, err
	}
	name, desc := sk.Name, sk.Description
	if p.Name != nil {
		name = skillmd.NormalizeName(*p.Name)
		if err := checkName(name); err != nil {
			return nil, err
		}
	}
	if p.Description != nil {
		desc = strings.TrimSpace(*p.Description)
		if err := checkDescription(desc, long); err != nil {
			return nil, err
		}
	}
	if p.Name == nil && p.Description == nil {
		return nil, invalidField("name", "nothing to change: give a name or a description")
	}
	pkg, err := s.packages.Get(ctx, sk.Digest)
	if err != nil {
		return nil, err
	}
	pkg, err = withIdentity(pkg, name, desc)
	if err != nil {
		return nil, err
	}
	var what []string
	if name != sk.Name {
		what = append(what, "renamed to "+name)
	}
	if desc != sk.Description {
		what = append(what, "new description")
	}
	return s.newVersion(ctx, a, sk, change{pkg: pkg, name: name, desc: desc, message: cmp.Or(strings.Join(what, ", "), "metadata unchanged")})
}

// withIdentity returns pkg with its SKILL.md's frontmatter saying name and
// description (pkg itself when it already does).
func withIdentity(pkg *pack.Package, name, desc string) (*pack.Package, error) {
	file := skillmd.Filename(func(n string) bool { _, ok := pkg.File(n); return ok })
	if file == "" {
		return pkg, nil // no SKILL.md to disagree with
	}
	f, _ := pkg.File(file)
	text, err := skillmd.WithIdentity(f.Data, name, desc)
	if err != nil {
		return nil, fmt.Errorf("rewriting %s: %w", file, err)
	}
	return pkg.WithFile(pack.File{Path: file, Data: text, Exec: f.Exec})
}

type DeleteSkillParams struct {
	SkillRef
}

// DeleteSkill deletes a skill with its versions (members and up). Packages
// and blobs that nothing else uses any more are deleted too.
func (s *Service) DeleteSkill(ctx context.Context, a Actor, p DeleteSkillParams) error {
	if err := a.can(skilld.RoleMember); err != nil {
		return err
	}
	sk, err := s.skill(ctx, a, p.ID)
	if err != nil {
		return err
	}
	versions, err := s.allVersions(ctx, a, sk.ID)
	if err != nil {
		return err
	}
	if err := s.db.SkillDelete(ctx, &store.SkillDeleteParams{WorkspaceID: a.WorkspaceID, ID: sk.ID}); err != nil {
		return err
	}
	s.event(ctx, a, a.WorkspaceID, "skill.deleted", sk.ID)
	digests := make([]string, 0, len(versions))
	for _, v := range versions {
		digests = append(digests, v.Digest)
	}
	// The skill is gone either way; a failure to free its storage leaves
	// garbage, not a broken skill, so it is not reported as a failed delete.
	s.packages.Release(ctx, digests)
	return nil
}

func (s *Service) allVersions(ctx context.Context, a Actor, skillID string) ([]*skilld.SkillVersion, error) {
	var out []*skilld.SkillVersion
	for offset := 0; ; offset += store.MaxPageSize {
		vs, err := s.db.SkillVersionList(ctx, &store.SkillVersionListParams{WorkspaceID: a.WorkspaceID, SkillID: skillID,
			Page: store.Page{Limit: store.MaxPageSize, Offset: offset}})
		if err != nil {
			return nil, err
		}
		out = append(out, vs...)
		if len(vs) < store.MaxPageSize {
			return out, nil
		}
	}
}

func checkName(name string) error {
	if name == "" {
		return invalidField("name", "name must not be empty")
	}
	if problems := skillmd.NameProblems(name); len(problems) > 0 {
		return invalidField("name", "%s", strings.Join(problems, "; "))
	}
	return nil
}

// checkDescription checks a description; long allows one over the
// specification's length (a workspace's lenient_lengths).
func checkDescription(d string, long bool) error {
	if d == "" {
		return invalidField("description", "description must not be empty")
	}
	if n := len([]rune(d)); n > skillmd.MaxDescriptionLength && !long {
		return invalidField("description", "Description exceeds %d character limit (%d chars)", skillmd.MaxDescriptionLength, n)
	}
	return checkText("description", d)
}
