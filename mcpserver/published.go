package mcpserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync"

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
// of the file; skillMDCache keeps what was learnt, so listings cost no
// more reads than before once each SKILL.md has been seen.

// maxSkillMDCache bounds the cache: each entry is a few hundred bytes,
// and a server holding more skills than this only reads a SKILL.md again.
const maxSkillMDCache = 8192

// skillMDKey names one served SKILL.md: a package (its digest), published
// under one name and description.
type skillMDKey struct{ pkg, name, description string }

// skillMDCache maps served SKILL.md files to their path, digest and size.
// What it holds follows from content alone (a package digest names its
// bytes), so entries never go stale and one cache serves every session and
// token; a token only ever asks for the packages of skills it can see.
type skillMDCache struct {
	mu sync.Mutex
	m  map[skillMDKey]skilld.PackageFile
}

func newSkillMDCache() *skillMDCache {
	return &skillMDCache{m: map[skillMDKey]skilld.PackageFile{}}
}

func (c *skillMDCache) get(k skillMDKey) (skilld.PackageFile, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.m[k]
	return f, ok
}

func (c *skillMDCache) put(k skillMDKey, f skilld.PackageFile) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxSkillMDCache {
		// Dropping everything is simpler than tracking use, and costs
		// one read per SKILL.md again.
		clear(c.m)
	}
	c.m[k] = f
}

// skillMD returns the SKILL.md of a skill's version as served: the version
// whose package digest is pkg and whose file list is list, or, when list
// is nil, the current version (pkg being what the caller believes it is).
func (s *Server) skillMD(ctx context.Context, sk *skilld.Skill, pkg string, list *service.SkillFiles) (skilld.PackageFile, error) {
	if f, ok := s.opts.skillMDs.get(skillMDKey{pkg, sk.Name, sk.Description}); ok {
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
		s.opts.skillMDs.put(skillMDKey{pkg, sk.Name, sk.Description}, f)
	}
	return out, f, nil
}
