package service

import (
	"bytes"
	"context"
	"errors"
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
	v, err := s.version(ctx, sk, n)
	if err != nil {
		return "", 0, err
	}
	return v.Digest, n, nil
}

// version returns version n of a skill. A missing one is named by the
// skill's name and says how many there are: the store knows only the ID,
// which tells the caller nothing.
func (s *Service) version(ctx context.Context, sk *skilld.Skill, n int) (*skilld.SkillVersion, error) {
	v, err := s.db.SkillVersionGet(ctx, &store.SkillVersionGetParams{WorkspaceID: sk.WorkspaceID, SkillID: sk.ID, Number: n})
	if skilld.ErrorCode(err) == skilld.ENOTFOUND {
		return nil, &skilld.Error{Code: skilld.ENOTFOUND, Err: err,
			Message: fmt.Sprintf("version %d of skill %q not found (it has %s)", n, sk.Name, versionCount(sk.Version))}
	}
	return v, err
}

// versionCount says "1 version" or "N versions". Versions are never
// deleted, so a skill's current number is also how many it has.
func versionCount(n int) string {
	if n == 1 {
		return "1 version"
	}
	return fmt.Sprintf("%d versions", n)
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
	sk, list, err := s.versionFiles(ctx, a, p.ID, p.Version)
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
	return nil, fileMiss(sk.Name, list, p.Path)
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
// version is the workspace's own and catalog updates no longer apply. An
// edit that changes nothing (the current files, name and description)
// makes no version and answers the current one, marked Unchanged.
func (s *Service) ReplaceSkillFiles(ctx context.Context, a Actor, p ReplaceSkillFilesParams) (*SkillView, error) {
	if err := a.can(skilld.RoleMember); err != nil {
		return nil, err
	}
	if err := checkExpected(p.ExpectedVersion); err != nil {
		return nil, err
	}
	pkg, err := inlinePackage(p.Files)
	if err != nil {
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
	pkg, name, desc, warnings, err := checkSkill(pkg, "", p.SkillOptions, fromFiles, long)
	if err != nil {
		return nil, err
	}
	return s.newVersion(ctx, a, sk, change{pkg: pkg, name: name, desc: desc, warnings: warnings, expected: p.ExpectedVersion, message: p.Message})
}

func checkExpected(expected *int) error {
	if expected != nil && *expected < 1 {
		return invalidField("expected_version", "expected_version must be a version number, 1 or more, not %d (leave it out to skip the check)", *expected)
	}
	return nil
}

type ReplaceSkillFilesFromArchiveParams struct {
	SkillRef
	Archive         []byte `json:"archive" jsonschema:"a zip, tar or tar.gz archive of the skill folder (base64 in JSON); its SKILL.md must name this skill"`
	ExpectedVersion *int   `json:"expected_version,omitempty" jsonschema:"the version this edit is based on (1 or more); a conflict is returned when the skill moved on"`
	Message         string `json:"message,omitempty" jsonschema:"what changed, kept with the version"`
	SkillOptions
}

// ReplaceSkillFilesFromArchive replaces a skill's files with an uploaded
// zip, tar or tar.gz archive (members and up), within the upload limits,
// making a new version: the way to edit a skill with binary files. The
// archive is read and checked as an upload that creates a skill is (an
// archive of one folder is the folder's content, whose name strict
// validation compares with the skill's), and its skill must be this one:
// a SKILL.md naming another skill is refused unless name says which name to
// keep, so that an archive sent to the wrong skill cannot replace it. As
// with inline edits, an archive of the current files changes nothing.
func (s *Service) ReplaceSkillFilesFromArchive(ctx context.Context, a Actor, p ReplaceSkillFilesFromArchiveParams) (*SkillView, error) {
	if err := a.can(skilld.RoleMember); err != nil {
		return nil, err
	}
	if err := checkExpected(p.ExpectedVersion); err != nil {
		return nil, err
	}
	sk, err := s.skill(ctx, a, p.ID)
	if err != nil {
		return nil, err
	}
	pkg, err := readArchive(ctx, p.Archive)
	if err != nil {
		return nil, err
	}
	long, err := s.lenientLengths(ctx, a)
	if err != nil {
		return nil, err
	}
	pkg, name, desc, warnings, err := checkSkill(pkg, pkg.TopDir(), p.SkillOptions, fromArchive, long)
	if err != nil {
		return nil, err
	}
	if p.Name == "" && name != sk.Name {
		return nil, invalidField("name", "the archive holds the skill %q, not %q: upload it to that skill or as a new one, "+
			"or pass name to make it a version of %q anyway (name=%s keeps this skill's name, name=%s renames it)",
			name, sk.Name, sk.Name, sk.Name, name)
	}
	return s.newVersion(ctx, a, sk, change{pkg: pkg, name: name, desc: desc, warnings: warnings, expected: p.ExpectedVersion, message: p.Message})
}

// change is a version to make: its package and the name and description
// it gives the skill.
type change struct {
	pkg        *pack.Package
	name, desc string
	warnings   []skilld.Detail
	expected   *int
	message    string
}

// errUnchanged rolls back the transaction of a change that turned out to
// change nothing.
var errUnchanged = errors.New("nothing changed")

// newVersion makes c the skill's next version, unless it would change
// nothing: then no version, event or row is written, and the current
// version is answered marked Unchanged.
func (s *Service) newVersion(ctx context.Context, a Actor, sk *skilld.Skill, c change) (*SkillView, error) {
	var out *skilld.Skill
	// The package is stored even when nothing changes: storing it again
	// puts back any of its files whose stored copy is damaged or lost, the
	// repair the integrity errors tell people to make.
	err := s.packages.Put(ctx, c.pkg, func(q store.Querier) error {
		v, err := q.SkillVersionCreate(ctx, &store.SkillVersionCreateParams{
			WorkspaceID: a.WorkspaceID, SkillID: sk.ID, Digest: c.pkg.Digest(), Message: c.message, CreatedBy: a.Name, ExpectedVersion: c.expected,
		})
		if err != nil {
			return err
		}
		// The comparison comes after the version is written: writing it
		// locks the skill, so what is read now is the state this edit
		// replaces, whatever concurrent edits committed first. Two
		// identical edits at once thus make one version, not two.
		cur, err := q.SkillGet(ctx, &store.SkillGetParams{WorkspaceID: a.WorkspaceID, ID: sk.ID})
		if err != nil {
			return err
		}
		same, err := sameAsBefore(ctx, q, a.WorkspaceID, v, c.pkg.Digest())
		if err != nil {
			return err
		}
		if same && cur.Name == c.name && cur.Description == c.desc {
			return errUnchanged
		}
		up := &store.SkillUpdateParams{WorkspaceID: a.WorkspaceID, ID: sk.ID, Name: &c.name, Description: &c.desc, UpdatedBy: a.Name}
		if sk.CatalogItemID != "" {
			forked := true
			up.Forked = &forked
		}
		// Read back inside the transaction: after it, a concurrent edit
		// could already have moved the skill on.
		out, err = q.SkillUpdate(ctx, up)
		return err
	})
	if errors.Is(err, errUnchanged) {
		return s.unchanged(ctx, a, sk.ID, c.warnings)
	}
	if err != nil {
		return nil, err
	}
	s.event(ctx, a, a.WorkspaceID, "skill.version.created", sk.ID)
	return view(out, c.warnings), nil
}

// sameAsBefore reports whether the version before v, just written, has
// the same package.
func sameAsBefore(ctx context.Context, q store.Querier, ws string, v *skilld.SkillVersion, digest string) (bool, error) {
	if v.Number <= 1 {
		return false, nil
	}
	prev, err := q.SkillVersionGet(ctx, &store.SkillVersionGetParams{WorkspaceID: ws, SkillID: v.SkillID, Number: v.Number - 1})
	if err != nil {
		return false, err
	}
	return prev.Digest == digest, nil
}

// unchanged answers a change that changed nothing: the skill as it is.
func (s *Service) unchanged(ctx context.Context, a Actor, id string, warnings []skilld.Detail) (*SkillView, error) {
	sk, err := s.db.SkillGet(ctx, &store.SkillGetParams{WorkspaceID: a.WorkspaceID, ID: id})
	if err != nil {
		return nil, err
	}
	v := view(sk, warnings)
	v.Unchanged = true
	return v, nil
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
	// stored, and a stricter validator or setting since must not make it
	// unrestorable.
	pkg, name, desc, warnings, err := checkSkill(pkg, "", SkillOptions{Lenient: true}, fromFiles, true)
	if err != nil {
		return nil, err
	}
	return s.newVersion(ctx, a, sk, change{pkg: pkg, name: name, desc: desc, warnings: warnings, message: fmt.Sprintf("restored version %d", p.Number)})
}

// skillVersion finds a skill of the actor's workspace and its version n.
func (s *Service) skillVersion(ctx context.Context, a Actor, ref string, n int) (*skilld.Skill, *skilld.SkillVersion, error) {
	sk, err := s.skill(ctx, a, ref)
	if err != nil {
		return nil, nil, err
	}
	v, err := s.version(ctx, sk, n)
	if err != nil {
		return nil, nil, err
	}
	return sk, v, nil
}
