package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilld/skilld/service"
)

// indexURI is the skills index resource. The Skills extension's drafts
// until its v1 had clients enumerate skills by reading it, in the format
// of the Agent Skills discovery index; v1 replaced it with skills/list, and
// it is served for the clients built on those drafts. No skill can be
// named "index.json" (names hold no '.'), so it never shadows a skill.
const indexURI = uriScheme + "://index.json"

// indexEntryType is the discovery index's entry type of a skill published
// as its SKILL.md.
const indexEntryType = "skill-md"

// SkillIndex is skill://index.json: an Agent Skills discovery index
// (service.DiscoverySchema) of the disclosed skills.
type SkillIndex struct {
	Schema string            `json:"$schema"`
	Skills []SkillIndexEntry `json:"skills"`
}

// SkillIndexEntry is one skill of the index.
type SkillIndexEntry struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Description string `json:"description"`
	// URL is the skill's SKILL.md resource.
	URL string `json:"url"`
	// Digest is that SKILL.md's, as served: what a client reading it
	// verifies it against.
	Digest string `json:"digest"`
	// Version is the skill's current version, skilld's addition to the
	// format.
	Version int `json:"version"`
}

func indexResource() *mcp.Resource {
	return &mcp.Resource{
		URI:         indexURI,
		Name:        "index.json",
		Title:       "Index of the skills",
		Description: "The skills of this workspace as an Agent Skills discovery index: each one's name, description, version and SKILL.md resource",
		MIMEType:    "application/json",
	}
}

// readIndex builds the index from the disclosed skills, asked now. Each
// entry needs only the skill and its SKILL.md's served digest, which is
// remembered per package, so the files of a skill are listed only the first
// time its version is indexed.
func (s *Server) readIndex(ctx context.Context, _ *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	skills, err := s.disclosed(ctx)
	if err != nil {
		return nil, s.protocolError(err)
	}
	idx := SkillIndex{Schema: service.DiscoverySchema, Skills: make([]SkillIndexEntry, 0, len(skills))}
	for _, sk := range skills {
		md, err := s.skillMD(ctx, sk, sk.Digest, nil)
		if err != nil {
			return nil, s.protocolError(err)
		}
		idx.Skills = append(idx.Skills, SkillIndexEntry{Name: sk.Name, Type: indexEntryType, Description: sk.Description,
			URL: fileURI(sk.Name, md.Path), Digest: md.Digest, Version: sk.Version})
	}
	b, err := json.Marshal(idx)
	if err != nil {
		return nil, s.protocolError(fmt.Errorf("encoding the index: %w", err))
	}
	return &mcp.ReadResourceResult{
		Contents:  []*mcp.ResourceContents{{URI: indexURI, MIMEType: "application/json", Text: string(b)}},
		Cacheable: mcp.Cacheable{TTLMs: skillsTTL, CacheScope: cacheScope},
	}, nil
}
