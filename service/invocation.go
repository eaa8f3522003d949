package service

import (
	"context"
	"fmt"
	"sync"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/skillmd"
)

// ModelInvocable reports whether a model may pick the skill of the listed
// version (its SKILL.md does not disable model invocation, nor Codex's
// agents/openai.yaml implicit invocation): surfaces that offer skills to a
// model (MCP's activate_skill) leave the others out.
func (s *Service) ModelInvocable(ctx context.Context, files *SkillFiles) (bool, error) {
	noModel, _, err := s.invocationOf(ctx, files.Digest, files.Files)
	return !noModel, err
}

// invocationOf says who may activate the package's skill: its SKILL.md's
// client fields and Codex's agents/openai.yaml, read once per package
// digest (packages never change) and remembered.
func (s *Service) invocationOf(ctx context.Context, digest string, files []skilld.PackageFile) (noModel, noUser bool, err error) {
	if v, ok := s.invocations.get(digest); ok {
		return v.noModel, v.noUser, nil
	}
	var skillMD, codex []byte
	for _, f := range files {
		var into *[]byte
		switch {
		case f.Path == skillmd.CodexMetadataFile && f.Size <= skillmd.MaxFrontmatterSize:
			into = &codex // (a larger one is no settings file: Invocation ignores it)
		case skillmd.Filename(func(n string) bool { return n == f.Path }) != "":
			into = &skillMD
		default:
			continue
		}
		if *into, err = s.packages.ReadFile(ctx, f); err != nil {
			return false, false, fmt.Errorf("package %s: %w", digest, err)
		}
	}
	noModel, noUser = skillmd.Invocation(skillMD, codex)
	s.invocations.put(digest, invocationFlags{noModel, noUser})
	return noModel, noUser, nil
}

type invocationFlags struct{ noModel, noUser bool }

// maxInvocations bounds the remembered packages; when full it starts
// over, costing one read of each package's SKILL.md.
const maxInvocations = 4096

// invocationCache remembers who may invoke each package's skill.
type invocationCache struct {
	mu sync.Mutex
	m  map[string]invocationFlags
}

func (c *invocationCache) get(digest string) (invocationFlags, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[digest]
	return v, ok
}

func (c *invocationCache) put(digest string, v invocationFlags) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxInvocations {
		c.m = make(map[string]invocationFlags)
	}
	c.m[digest] = v
}
