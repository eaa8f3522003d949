package service

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/store"
)

// versionDigest returns the package digest and number of version n of a
// skill, or of the current version when n is 0.
func (s *Service) versionDigest(ctx context.Context, sk *skilld.Skill, n int) (string, int, error) {
	if n == 0 {
		return sk.Digest, sk.Version, nil
	}
	v, err := s.db.SkillVersionGet(ctx, &store.SkillVersionGetParams{WorkspaceID: sk.WorkspaceID, SkillID: sk.ID, Number: n})
	if err != nil {
		return "", 0, err
	}
	return v.Digest, n, nil
}

type GetSkillContentParams struct {
	SkillRef
	Version int `json:"version,omitempty" query:"version" jsonschema:"version number; the current version when omitted"`
}

// SkillContent is a skill's SKILL.md text.
type SkillContent struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Version int    `json:"version"`
	Content string `json:"content"`
}

// GetSkillContent returns the SKILL.md of a version (viewers and up).
func (s *Service) GetSkillContent(ctx context.Context, a Actor, p GetSkillContentParams) (*SkillContent, error) {
	sk, list, err := s.versionFiles(ctx, a, p.ID, p.Version)
	if err != nil {
		return nil, err
	}
	out := &SkillContent{ID: sk.ID, Name: sk.Name, Version: list.Version}
	for _, f := range list.Files {
		if pack.IsSkillMD(f.Path) {
			data, err := s.packages.ReadFile(ctx, f)
			if err != nil {
				return nil, err
			}
			out.Content = string(data)
		}
	}
	return out, nil
}

// versionFiles finds a skill and lists the files of one of its versions
// (the current one for version 0), for viewers and up.
func (s *Service) versionFiles(ctx context.Context, a Actor, ref string, version int) (*skilld.Skill, *SkillFiles, error) {
	if err := a.can(skilld.RoleViewer); err != nil {
		return nil, nil, err
	}
	sk, err := s.skill(ctx, a, ref)
	if err != nil {
		return nil, nil, err
	}
	digest, n, err := s.versionDigest(ctx, sk, version)
	if err != nil {
		return nil, nil, err
	}
	files, err := s.db.PackageFileList(ctx, &store.PackageFileListParams{Digest: digest})
	if err != nil {
		return nil, nil, err
	}
	if files == nil {
		files = []skilld.PackageFile{}
	}
	return sk, &SkillFiles{Version: n, Digest: digest, Files: files}, nil
}

type ListSkillFilesParams struct {
	SkillRef
	Version int `json:"version,omitempty" query:"version" jsonschema:"version number; the current version when omitted"`
}

// SkillFiles lists the files of one version of a skill.
type SkillFiles struct {
	Version int                  `json:"version"`
	Digest  string               `json:"digest"`
	Files   []skilld.PackageFile `json:"files"`
}

// ListSkillFiles lists a version's files (viewers and up).
func (s *Service) ListSkillFiles(ctx context.Context, a Actor, p ListSkillFilesParams) (*SkillFiles, error) {
	_, list, err := s.versionFiles(ctx, a, p.ID, p.Version)
	return list, err
}

type GetSkillFileParams struct {
	SkillRef
	Path    string `json:"path" path:"path" jsonschema:"the file's path in the skill, such as scripts/run.sh"`
	Version int    `json:"version,omitempty" query:"version" jsonschema:"version number; the current version when omitted"`
}

// SkillFile is one file of a skill, read and verified against its digest
// before it is returned, so a damaged stored copy never reaches a client;
// the caller closes Body.
type SkillFile struct {
	skilld.PackageFile
	Body io.ReadCloser `json:"-"`
}

// GetSkillFile opens one file of a version (viewers and up).
func (s *Service) GetSkillFile(ctx context.Context, a Actor, p GetSkillFileParams) (*SkillFile, error) {
	list, err := s.ListSkillFiles(ctx, a, ListSkillFilesParams{SkillRef: p.SkillRef, Version: p.Version})
	if err != nil {
		return nil, err
	}
	for _, f := range list.Files {
		if f.Path == p.Path {
			data, err := s.packages.ReadFile(ctx, f)
			if err != nil {
				return nil, err
			}
			return &SkillFile{PackageFile: f, Body: io.NopCloser(bytes.NewReader(data))}, nil
		}
	}
	return nil, skilld.Errorf(skilld.ENOTFOUND, "file %q not found in version %d of skill %q", p.Path, list.Version, p.ID)
}

type ReplaceSkillFilesParams struct {
	SkillRef
	Files map[string]string `json:"files" jsonschema:"the new file set as text by path; replaces every file; SKILL.md at the root is required"`
	// ExpectedVersion makes the edit fail with a conflict when someone
	// else changed the skill first. Absent means no check; when given it
	// must be a version number, 1 or more.
	ExpectedVersion *int   `json:"expected_version,omitempty" jsonschema:"the version this edit is based on (1 or more); a conflict is returned when the skill moved on"`
	Message         string `json:"message,omitempty" jsonschema:"what changed, kept with the version"`
	SkillOptions
}

// ReplaceSkillFiles replaces a skill's files, making a new version (members
// and up). The name and description follow the new SKILL.md unless
// overridden. Editing a skill installed from the catalog forks it: the new
// version is the workspace's own and catalog updates no longer apply.
func (s *Service) ReplaceSkillFiles(ctx context.Context, a Actor, p ReplaceSkillFilesParams) (*SkillView, error) {
	if err := a.can(skilld.RoleMember); err != nil {
		return nil, err
	}
	if p.ExpectedVersion != nil && *p.ExpectedVersion < 1 {
		return nil, invalidField("expected_version", "expected_version must be a version number, 1 or more, not %d (leave it out to skip the check)", *p.ExpectedVersion)
	}
	pkg, err := inlinePackage(p.Files)
	if err != nil {
		return nil, err
	}
	return s.newVersion(ctx, a, p.ID, pkg, p.SkillOptions, p.ExpectedVersion, p.Message)
}

// newVersion validates pkg and makes it the skill's next version.
func (s *Service) newVersion(ctx context.Context, a Actor, ref string, pkg *pack.Package, o SkillOptions, expected *int, message string) (*SkillView, error) {
	sk, err := s.skill(ctx, a, ref)
	if err != nil {
		return nil, err
	}
	name, desc, warnings, err := checkSkill(pkg, "", o)
	if err != nil {
		return nil, err
	}
	var out *skilld.Skill
	err = s.packages.Put(ctx, pkg, func(q store.Querier) error {
		if _, err := q.SkillVersionCreate(ctx, &store.SkillVersionCreateParams{
			WorkspaceID: a.WorkspaceID, SkillID: sk.ID, Digest: pkg.Digest(), Message: message, CreatedBy: a.Name, ExpectedVersion: expected,
		}); err != nil {
			return err
		}
		up := &store.SkillUpdateParams{WorkspaceID: a.WorkspaceID, ID: sk.ID, Name: &name, Description: &desc, UpdatedBy: a.Name}
		if sk.CatalogItemID != "" {
			forked := true
			up.Forked = &forked
		}
		// Read back inside the transaction: after it, a concurrent edit
		// could already have moved the skill on.
		var err error
		out, err = q.SkillUpdate(ctx, up)
		return err
	})
	if err != nil {
		return nil, err
	}
	s.event(ctx, a, a.WorkspaceID, "skill.version.created", sk.ID)
	return view(out, warnings), nil
}

type ListSkillVersionsParams struct {
	SkillRef
	Page      int    `json:"page,omitempty" query:"page" jsonschema:"page number, from 1"`
	PageSize  int    `json:"page_size,omitempty" query:"page_size" jsonschema:"items per page, at most 100 (default 50)"`
	PageToken string `json:"page_token,omitempty" query:"page_token" jsonschema:"the next_page_token of the previous page (instead of page)"`
}

// VersionList lists versions, newest first.
type VersionList struct {
	Items         []*skilld.SkillVersion `json:"items"`
	NextPageToken string                 `json:"next_page_token,omitempty"`
}

// ListSkillVersions lists a skill's versions, newest first (viewers and up).
func (s *Service) ListSkillVersions(ctx context.Context, a Actor, p ListSkillVersionsParams) (*VersionList, error) {
	if err := a.can(skilld.RoleViewer); err != nil {
		return nil, err
	}
	sk, err := s.skill(ctx, a, p.ID)
	if err != nil {
		return nil, err
	}
	query := filterDigest(a.WorkspaceID, sk.ID)
	pg, _, err := keyed(Page{Page: p.Page, PageSize: p.PageSize}, p.PageToken, "versions", query)
	if err != nil {
		return nil, err
	}
	vs, err := s.db.SkillVersionList(ctx, &store.SkillVersionListParams{WorkspaceID: a.WorkspaceID, SkillID: sk.ID, Page: pg})
	if vs == nil {
		vs = []*skilld.SkillVersion{}
	}
	out := &VersionList{Items: vs}
	// The list has no total: a full page may be followed by more.
	if n := len(vs); n > 0 && n == pg.Limit {
		out.NextPageToken = encodePageToken("versions", query, strconv.Itoa(vs[n-1].Number))
	}
	return out, err
}

type GetSkillVersionParams struct {
	SkillRef
	Number int `json:"number" path:"n" jsonschema:"version number"`
}

// VersionDetail is one version with its files.
type VersionDetail struct {
	*skilld.SkillVersion
	Files []skilld.PackageFile `json:"files"`
}

// GetSkillVersion returns one version and its files (viewers and up).
func (s *Service) GetSkillVersion(ctx context.Context, a Actor, p GetSkillVersionParams) (*VersionDetail, error) {
	if err := a.can(skilld.RoleViewer); err != nil {
		return nil, err
	}
	_, v, err := s.skillVersion(ctx, a, p.ID, p.Number)
	if err != nil {
		return nil, err
	}
	files, err := s.db.PackageFileList(ctx, &store.PackageFileListParams{Digest: v.Digest})
	return &VersionDetail{SkillVersion: v, Files: files}, err
}

type RestoreSkillVersionParams struct {
	SkillRef
	Number int `json:"number" path:"n" jsonschema:"the version to restore"`
}

// RestoreSkillVersion makes an old version current again as a new version
// (members and up); history is never rewritten.
func (s *Service) RestoreSkillVersion(ctx context.Context, a Actor, p RestoreSkillVersionParams) (*SkillView, error) {
	if err := a.can(skilld.RoleMember); err != nil {
		return nil, err
	}
	sk, v, err := s.skillVersion(ctx, a, p.ID, p.Number)
	if err != nil {
		return nil, err
	}
	pkg, err := s.packages.Get(ctx, v.Digest)
	if err != nil {
		return nil, err
	}
	// The restored SKILL.md is checked leniently: it was valid when it was
	// stored, and a stricter validator since must not make it unrestorable.
	return s.newVersion(ctx, a, sk.ID, pkg, SkillOptions{Lenient: true}, nil, fmt.Sprintf("restored version %d", p.Number))
}

// skillVersion finds a skill of the actor's workspace and its version n.
func (s *Service) skillVersion(ctx context.Context, a Actor, ref string, n int) (*skilld.Skill, *skilld.SkillVersion, error) {
	sk, err := s.skill(ctx, a, ref)
	if err != nil {
		return nil, nil, err
	}
	v, err := s.db.SkillVersionGet(ctx, &store.SkillVersionGetParams{WorkspaceID: a.WorkspaceID, SkillID: sk.ID, Number: n})
	if err != nil {
		return nil, nil, err
	}
	return sk, v, nil
}
