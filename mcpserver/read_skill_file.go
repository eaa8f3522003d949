package mcpserver

import (
	"context"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/tool"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/service"
)

const toolReadSkillFile = "read_skill_file"

type readSkillFileParams struct {
	SkillName string `json:"skill_name" jsonschema:"the skill's name, as list_skills shows it"`
	Path      string `json:"path" jsonschema:"the file's path in the skill, as activate_skill lists it (such as references/api.md)"`
}

func (s *Server) readSkillFileTool() *tool.Tool {
	t, err := tool.New(toolReadSkillFile, fmt.Sprintf("Read one file of a skill as text (at most %d bytes): the references and scripts "+
		"an activated skill's instructions point to.", MaxFileRead),
		func(ctx context.Context, p readSkillFileParams) (string, error) {
			sk, err := s.skill(ctx, p.SkillName)
			if err != nil {
				return "", err
			}
			data, f, err := s.readFile(ctx, sk, p.Path, MaxFileRead)
			// The model spells a file as the skill's own text does, which
			// may differ in case from the file (REFERENCE.md for
			// reference.md): the one file it can mean is read instead.
			if actual, ok := service.CaseOnlyMatch(err); ok {
				data, f, err = s.readFile(ctx, sk, actual, MaxFileRead)
			}
			if err != nil {
				return "", err
			}
			if !utf8.Valid(data) {
				return "", skilld.Errorf(skilld.EINVALID, "file %q of skill %q is binary; read it as the resource %s", f.Path, sk.Name, fileURI(sk.Name, f.Path))
			}
			return string(data), nil
		})
	if err != nil {
		panic(err)
	}
	return t
}

// readFile reads one file of a disclosed skill's current version, verified
// against its digest by the service, refusing files above limit bytes. A
// SKILL.md comes as it is served (see published.go), with the digest and
// size of the served bytes.
func (s *Server) readFile(ctx context.Context, sk *skilld.Skill, path string, limit int64) ([]byte, skilld.PackageFile, error) {
	return s.readVersionFile(ctx, sk, nil, path, limit)
}

// readVersionFile is readFile in the version list lists (the current
// version when list is nil); knowing the version's package digest, it
// remembers a served SKILL.md's digest and size.
func (s *Server) readVersionFile(ctx context.Context, sk *skilld.Skill, list *service.SkillFiles, path string, limit int64) ([]byte, skilld.PackageFile, error) {
	if path == "" {
		return nil, skilld.PackageFile{}, skilld.Errorf(skilld.EINVALID, "path is required: give a file's path in skill %q", sk.Name)
	}
	p := service.GetSkillFileParams{SkillRef: service.SkillRef{ID: sk.ID}, Path: path}
	pkg := ""
	if list != nil {
		p.Version, pkg = list.Version, list.Digest
	}
	f, err := s.svc.GetSkillFile(ctx, s.actor, p)
	if err != nil {
		if skilld.ErrorCode(err) == skilld.ENOTFOUND {
			// The cause stays: it says which file a case-only miss meant.
			return nil, skilld.PackageFile{}, &skilld.Error{Code: skilld.ENOTFOUND,
				Message: fmt.Sprintf("skill %q has no file %q; activate_skill lists its files", sk.Name, path), Err: err}
		}
		return nil, skilld.PackageFile{}, err
	}
	defer f.Body.Close()
	if limit > 0 && f.Size > limit {
		return nil, f.PackageFile, skilld.Errorf(skilld.ETOOLARGE, "file %q of skill %q is %d bytes; this reads at most %d", path, sk.Name, f.Size, limit)
	}
	data, err := io.ReadAll(f.Body)
	if err != nil {
		return nil, f.PackageFile, fmt.Errorf("reading %q of skill %q: %w", path, sk.Name, err)
	}
	if pack.IsSkillMD(path) {
		return s.publish(sk, pkg, f.PackageFile, data)
	}
	return data, f.PackageFile, nil
}
