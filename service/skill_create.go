package service

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/skillmd"
	"github.com/skilld/skilld/store"
)

// SkillOptions are what every way of creating a skill accepts besides its
// files: overrides of the frontmatter's name and description (which must
// still be valid), and lenient validation.
type SkillOptions struct {
	Name        string `json:"name,omitempty" jsonschema:"name to use instead of the one in SKILL.md"`
	Description string `json:"description,omitempty" jsonschema:"description to use instead of the one in SKILL.md"`
	Lenient     bool   `json:"lenient,omitempty" jsonschema:"accept unknown frontmatter keys, reporting them as warnings"`
}

type CreateSkillParams struct {
	Files map[string]string `json:"files" jsonschema:"the skill's files as text by path; SKILL.md at the root is required"`
	SkillOptions
}

// CreateSkill creates a skill from inline files (members and up), within
// the inline limits: 200 files, 5 MiB, 10 folders deep.
func (s *Service) CreateSkill(ctx context.Context, a Actor, p CreateSkillParams) (*SkillView, error) {
	if err := a.can(skilld.RoleMember); err != nil {
		return nil, err
	}
	pkg, err := inlinePackage(p.Files)
	if err != nil {
		return nil, err
	}
	return s.createFromPackage(ctx, a, pkg, "", p.SkillOptions, source{typ: skilld.SourceContent})
}

// inlinePackage builds a package from inline text files.
func inlinePackage(files map[string]string) (*pack.Package, error) {
	if len(files) == 0 {
		return nil, invalidField("files", "files is required and must include SKILL.md")
	}
	if len(files) > pack.InlineMaxFiles {
		return nil, &skilld.Error{Code: skilld.ETOOLARGE, Message: "too many files: inline skills may have at most 200", Err: pack.ErrTooManyFiles}
	}
	list := make([]pack.File, 0, len(files))
	for path, text := range files {
		list = append(list, pack.File{Path: path, Data: []byte(text), Exec: strings.HasPrefix(text, "#!")})
	}
	return pack.New(list, pack.InlineLimits())
}

type CreateSkillFromArchiveParams struct {
	Archive []byte `json:"archive" jsonschema:"a zip, tar or tar.gz archive of the skill folder (base64 in JSON)"`
	SkillOptions
}

// CreateSkillFromArchive creates a skill from an uploaded zip, tar or
// tar.gz archive (members and up), within the upload limits: 1,000 files,
// 10 MiB per file, 50 MiB in all.
func (s *Service) CreateSkillFromArchive(ctx context.Context, a Actor, p CreateSkillFromArchiveParams) (*SkillView, error) {
	if err := a.can(skilld.RoleMember); err != nil {
		return nil, err
	}
	pkg, err := readArchive(ctx, p.Archive)
	if err != nil {
		return nil, err
	}
	return s.createFromPackage(ctx, a, pkg, pkg.TopDir(), p.SkillOptions, source{typ: skilld.SourceZip})
}

// readArchive reads an uploaded archive within the upload limits.
func readArchive(ctx context.Context, archive []byte) (*pack.Package, error) {
	if len(archive) == 0 {
		return nil, invalidField("archive", "archive is empty")
	}
	return pack.ReadArchive(ctx, bytes.NewReader(archive), int64(len(archive)), pack.ArchiveLimits())
}

type ImportPathParams struct {
	Path string `json:"path" jsonschema:"absolute path of a skill folder on the server"`
	SkillOptions
}

// ImportPath creates a skill from a folder on the server (admins only, and
// only under the folders the operator allowed; off by default).
func (s *Service) ImportPath(ctx context.Context, a Actor, p ImportPathParams) (*SkillView, error) {
	if err := a.can(skilld.RoleAdmin); err != nil {
		return nil, err
	}
	if len(s.cfg.PathImportRoots) == 0 {
		return nil, skilld.Errorf(skilld.EFORBIDDEN, "importing from server paths is disabled (start the server with --path-import-root)")
	}
	if err := s.limitImports(a); err != nil {
		return nil, err
	}
	dir, err := s.allowedPath(p.Path)
	if err != nil {
		return nil, err
	}
	pkg, err := pack.ReadDir(ctx, dir, pack.ArchiveLimits())
	if err != nil {
		return nil, err
	}
	return s.createFromPackage(ctx, a, pkg, filepath.Base(dir), p.SkillOptions, source{typ: skilld.SourcePath, url: "file://" + filepath.ToSlash(dir)})
}

// allowedPath resolves p, following links, and checks that it lies inside
// one of the configured roots.
func (s *Service) allowedPath(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", invalidField("path", "path must be absolute, not %q", p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		if os.IsNotExist(err) {
			return "", skilld.Errorf(skilld.ENOTFOUND, "path %q does not exist", p)
		}
		return "", invalidField("path", "cannot resolve %q: %v", p, err)
	}
	for _, root := range s.cfg.PathImportRoots {
		r, err := filepath.EvalSymlinks(root)
		if err != nil {
			continue
		}
		if rel, err := filepath.Rel(r, real); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return real, nil
		}
	}
	return "", skilld.Errorf(skilld.EFORBIDDEN, "path %q is outside the folders allowed for imports", p)
}

// source says where a new skill comes from.
type source struct {
	typ            skilld.SourceType
	url            string
	registry       string
	trust          skilld.Trust
	catalogItemID  string
	catalogVersion int
}

// origin is what a package was sent as, for the messages about its shape.
type origin int

const (
	fromFiles   origin = iota // inline files
	fromArchive               // an uploaded archive
	fromFolder                // a folder on the server
)

func originOf(t skilld.SourceType) origin {
	switch t {
	case skilld.SourceZip:
		return fromArchive
	case skilld.SourcePath, skilld.SourceGitHub:
		return fromFolder
	}
	return fromFiles
}

// noSkillAtRoot explains a package without a root SKILL.md. One that holds
// skills in its folders (a repository's skills/ zipped whole, a folder of
// skills sent inline) is named as such, with the skills it holds, since
// "no SKILL.md" would send its author looking for a file that is there.
func noSkillAtRoot(pkg *pack.Package, from origin) error {
	dirs := pkg.SkillDirs()
	if len(dirs) == 0 {
		return invalidField("files", "the skill has no SKILL.md at its root")
	}
	what, each, one := "the files hold", "send them one by one: the files of each skill's folder", "send the files of that folder instead"
	switch from {
	case fromArchive:
		what, each, one = "the archive holds", "upload them one by one: an archive of each skill's folder", "upload an archive of that folder instead"
	case fromFolder:
		what, each, one = "the folder holds", "import them one by one: the path of each skill's folder", "import that folder instead"
	}
	if len(dirs) == 1 {
		return invalidField("files", "%s %s, not at its root; %s", what, pack.DescribeSkills(dirs), one)
	}
	return invalidField("files", "%s %s, not one at its root; %s", what, pack.DescribeSkills(dirs), each)
}

// checkSkill validates a package as a skill: a root SKILL.md that passes
// the specification (dir, when set, is the folder name it must match), with
// the overrides applied and checked. It returns the name and description
// to store and the validator's warnings.
//
// When name or description overrides the frontmatter's, the package is
// returned with its SKILL.md rewritten to say so (a new digest): a stored
// skill's SKILL.md always names it, so MCP, the discovery archive and a
// pulled folder all agree with the catalog.
func checkSkill(pkg *pack.Package, dir string, o SkillOptions, from origin, long bool) (_ *pack.Package, name, desc string, warnings []skilld.Detail, err error) {
	file := skillmd.Filename(func(n string) bool { _, ok := pkg.File(n); return ok })
	if file == "" {
		return nil, "", "", nil, noSkillAtRoot(pkg, from)
	}
	f, _ := pkg.File(file)
	opts := skillmd.Options{Lenient: o.Lenient, Dir: dir, LongFields: long}
	if o.Name != "" {
		opts.Dir = "" // an explicit name replaces the folder's
	}
	r := skillmd.Check(f.Data, opts)
	if o.Name != "" || o.Description != "" {
		r.Errors = dropOverridden(r.Errors, o)
	}
	if err := r.Err(); err != nil {
		return nil, "", "", r.Warnings, err
	}
	name, desc = r.Skill.Name, r.Skill.Description
	if err := checkText("description", desc); err != nil {
		return nil, "", "", r.Warnings, err
	}
	if o.Name != "" {
		name = skillmd.NormalizeName(o.Name)
		if err := checkName(name); err != nil {
			return nil, "", "", r.Warnings, err
		}
	}
	if o.Description != "" {
		desc = strings.TrimSpace(o.Description)
		if err := checkDescription(desc, long); err != nil {
			return nil, "", "", r.Warnings, err
		}
	}
	if name != r.Skill.Name || desc != r.Skill.Description {
		if pkg, err = withIdentity(pkg, name, desc); err != nil {
			return nil, "", "", r.Warnings, err
		}
	}
	return pkg, name, desc, r.Warnings, nil
}

// dropOverridden removes the problems of fields that an override replaces,
// so a SKILL.md without a usable name can be stored under a given one.
func dropOverridden(errs []skilld.Detail, o SkillOptions) []skilld.Detail {
	out := errs[:0:0]
	for _, e := range errs {
		if e.Field == skillmd.FieldName && o.Name != "" || e.Field == skillmd.FieldDescription && o.Description != "" {
			continue
		}
		out = append(out, e)
	}
	return out
}

// createFromPackage validates and stores a new skill with its first
// version, all or nothing.
func (s *Service) createFromPackage(ctx context.Context, a Actor, pkg *pack.Package, dir string, o SkillOptions, src source) (*SkillView, error) {
	long, err := s.lenientLengths(ctx, a)
	if err != nil {
		return nil, err
	}
	pkg, name, desc, warnings, err := checkSkill(pkg, dir, o, originOf(src.typ), long)
	if err != nil {
		return nil, err
	}
	// A skill from a registry (a GitHub import) is asked of the install
	// policy again with what the scanner finds in it, before it is stored.
	if src.registry != "" && s.packages.Scanner != nil {
		found := func(ctx context.Context) ([]skilld.Finding, error) { return s.packages.Scanner.Scan(ctx, pkg) }
		if err := s.checkInstall(ctx, a.WorkspaceID, src.registry, src.trust, name, found, unsigned(pkg.Digest())); err != nil {
			return nil, err
		}
	}
	var id string
	err = s.packages.Put(ctx, pkg, func(q store.Querier) error {
		sk, err := q.SkillCreate(ctx, &store.SkillCreateParams{
			WorkspaceID: a.WorkspaceID, Name: name, Description: desc, SourceType: src.typ, SourceURL: src.url,
			Registry: src.registry, Trust: src.trust, CatalogItemID: src.catalogItemID, CatalogVersion: src.catalogVersion,
			CreatedBy: a.Name,
		})
		if err != nil {
			return err
		}
		zero := 0
		if _, err := q.SkillVersionCreate(ctx, &store.SkillVersionCreateParams{
			WorkspaceID: a.WorkspaceID, SkillID: sk.ID, Digest: pkg.Digest(), Message: "created", CreatedBy: a.Name, ExpectedVersion: &zero,
		}); err != nil {
			return err
		}
		id = sk.ID
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.event(ctx, a, a.WorkspaceID, "skill.created", id)
	sk, err := s.db.SkillGet(ctx, &store.SkillGetParams{WorkspaceID: a.WorkspaceID, ID: id})
	if err != nil {
		return nil, err
	}
	return view(sk, warnings), nil
}

// lenientLengths reports whether the actor's workspace stores skills with
// over-long fields (with a warning) rather than refusing them.
func (s *Service) lenientLengths(ctx context.Context, a Actor) (bool, error) {
	w, err := s.findWorkspace(ctx, a.WorkspaceID)
	if err != nil {
		return false, err
	}
	return w.LenientLengths, nil
}
