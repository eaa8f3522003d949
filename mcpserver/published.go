package mcpserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/service"
)

// A skill's SKILL.md is served with its frontmatter saying the skill's
// stored name and description (service.PublishedSkillMD), so its bytes,
// digest and size may differ from the stored file's. Every listing that
// states them (resources/list, skills/list, resources/directory/read,
// skill://index.json) must state the served ones, or a client verifying
// what it reads against them would reject it. Learning them takes a read
// of the file; caches.skillMDs keeps what was learnt, so listings cost no
// more reads than before once each SKILL.md has been seen.

// skillMDKey names one served SKILL.md: a package (its digest), published
// under one name and description. What it maps to follows from content
// alone (a package digest names its bytes), so entries never go stale and
// one cache serves every session and token; a token only ever asks for the
// packages of skills it can see.
type skillMDKey struct{ pkg, name, description string }

// skillMD returns the SKILL.md of a skill's version as served: the version
// whose package digest is pkg and whose file list is list, or, when list
// is nil, the current version (pkg being what the caller believes it is).
func (s *Server) skillMD(ctx context.Context, sk *skilld.Skill, pkg string, list *service.SkillFiles) (skilld.PackageFile, error) {
	if f, ok := s.opts.caches.skillMDs.get(skillMDKey{pkg, sk.Name, sk.Description}); ok {
		return f, nil
	}
	if list == nil {
		var err error
		if list, err = s.files(ctx, sk); err != nil {
			return skilld.PackageFile{}, err
		}
	}
	for _, f := range list.Files {
		if pack.IsSkillMD(f.Path) {
			_, served, err := s.readVersionFile(ctx, sk, list, f.Path, 0)
			return served, err
		}
	}
	return skilld.PackageFile{}, skilld.Errorf(skilld.EINTEGRITY, "skill %q has no SKILL.md in version %d", sk.Name, list.Version)
}

// served is file f of a skill's version as it is served: f itself, but
// for the SKILL.md.
func (s *Server) served(ctx context.Context, sk *skilld.Skill, list *service.SkillFiles, f skilld.PackageFile) (skilld.PackageFile, error) {
	if !pack.IsSkillMD(f.Path) {
		return f, nil
	}
	return s.skillMD(ctx, sk, list.Digest, list)
}

// publish turns a stored SKILL.md into the served one. When the package it
// was read from is known (pkg), its digest and size are remembered.
func (s *Server) publish(sk *skilld.Skill, pkg string, stored skilld.PackageFile, data []byte) ([]byte, skilld.PackageFile, error) {
	out, err := service.PublishedSkillMD(sk, data)
	if err != nil {
		return nil, stored, err
	}
	f := stored
	if !bytes.Equal(out, data) {
		sum := sha256.Sum256(out)
		f.Digest, f.Size = "sha256:"+hex.EncodeToString(sum[:]), int64(len(out))
	}
	if pkg != "" {
		s.opts.caches.skillMDs.put(skillMDKey{pkg, sk.Name, sk.Description}, f)
	}
	return out, f, nil
}
