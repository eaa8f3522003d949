package service

import (
	"context"
	"fmt"
	"sync"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/permissions"
	"github.com/skilld/skilld/skillmd"
	"github.com/skilld/skilld/skillsearch"
)

// ModelInvocable reports whether a model may pick the skill of the listed
// version (its SKILL.md does not disable model invocation, nor Codex's
// agents/openai.yaml implicit invocation): surfaces that offer skills to a
// model (MCP's activate_skill) leave the others out.
func (s *Service) ModelInvocable(ctx context.Context, files *SkillFiles) (bool, error) {
	f, err := s.skillFacts(ctx, files.Digest, files.Files)
	return !f.noModel, err
}

// skillFacts says who may activate the package's skill (its SKILL.md's
// client fields and Codex's agents/openai.yaml), what its SKILL.md's
// headings are (for search_skills) and what its skilld.yaml asks for, read once per package digest
// (packages never change) and remembered.
func (s *Service) skillFacts(ctx context.Context, digest string, files []skilld.PackageFile) (skillFacts, error) {
	if v, ok := s.invocations.get(digest); ok {
		return v, nil
	}
	var err error
	var skillMD, codex, perms []byte
	for _, f := range files {
		var into *[]byte
		switch {
		case f.Path == skillmd.CodexMetadataFile && f.Size <= skillmd.MaxFrontmatterSize:
			into = &codex // (a larger one is no settings file: Invocation ignores it)
		case f.Path == permissions.File:
			into = &perms
		case skillmd.Filename(func(n string) bool { return n == f.Path }) != "":
			into = &skillMD
		default:
			continue
		}
		if *into, err = s.packages.ReadFile(ctx, f); err != nil {
			return skillFacts{}, fmt.Errorf("package %s: %w", digest, err)
		}
	}
	var v skillFacts
	v.noModel, v.noUser = skillmd.Invocation(skillMD, codex)
	v.headings = skillsearch.Headings(skillMD)
	if perms != nil {
		// An invalid file asks for its valid entries (the scanner reports
		// the rest).
		v.request, _ = permissions.Parse(perms)
	}
	s.invocations.put(digest, v)
	return v, nil
}

// skillFacts is what the snapshot reads of a package's SKILL.md.
type skillFacts struct {
	noModel, noUser bool
	headings        []string
	// request is what its skilld.yaml asks for.
	request permissions.Request
}

// maxInvocations bounds the remembered packages; when full it starts
// over, costing one read of each package's SKILL.md.
const maxInvocations = 4096

// invocationCache remembers what snapshots read of each package's
// SKILL.md (skillFacts).
type invocationCache struct {
	mu sync.Mutex
	m  map[string]skillFacts
}

func (c *invocationCache) get(digest string) (skillFacts, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[digest]
	return v, ok
}

func (c *invocationCache) put(digest string, v skillFacts) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxInvocations {
		c.m = make(map[string]skillFacts)
	}
	c.m[digest] = v
}
