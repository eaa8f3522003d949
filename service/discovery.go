package service

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/skillmd"
	"github.com/skilld/skilld/store"
)

// Agent Skills discovery (the well-known URI RFC,
// https://agentskills.io/well-known-uri): an index of a workspace's skills,
// each an archive whose SHA-256 the index states.
const (
	// DiscoverySchema is the index's "$schema": the version of the
	// discovery format it follows.
	DiscoverySchema = "https://schemas.agentskills.io/discovery/0.2.0/schema.json"
	// DiscoveryTypeArchive is the entry type of a skill served as an archive.
	DiscoveryTypeArchive = "archive"
	// DiscoveryArchiveName is the last segment of a skill's archive URL,
	// below the skill's slug.
	DiscoveryArchiveName = "archive.zip"
	// PublicDiscoveryWorkspace is the one workspace whose index may be
	// served without a token, when the operator enables it.
	PublicDiscoveryWorkspace = "default"
)

type DiscoveryIndexParams struct{}

// DiscoveryIndex is a discovery index. Field names are the RFC's.
type DiscoveryIndex struct {
	Schema string           `json:"$schema"`
	Skills []DiscoveryEntry `json:"skills"`
}

// DiscoveryEntry is one skill of a discovery index.
type DiscoveryEntry struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Description string `json:"description"`
	// URL is relative to the index (RFC 3986 resolution): the skill's
	// slug, then DiscoveryArchiveName.
	URL string `json:"url"`
	// Digest is "sha256:" and the hex SHA-256 of the archive's bytes.
	Digest string `json:"digest"`
}

type SkillArchiveParams struct{ SkillRef }

// SkillArchive is a skill's current version as a reproducible zip
// (pack.WriteZip): the same package always gives the same bytes, so Digest
// is the one the index lists.
type SkillArchive struct {
	Name   string `json:"name"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
	// Body holds the archive's bytes; the caller closes it.
	Body io.ReadCloser `json:"-"`
}

// DiscoveryIndex lists the workspace's skills that the install policy
// does not withhold, each with the digest of its archive (viewers and up).
// Every listed package is read (and verified) to compute its archive's
// digest.
func (s *Service) DiscoveryIndex(ctx context.Context, a Actor, _ DiscoveryIndexParams) (*DiscoveryIndex, error) {
	if err := a.can(skilld.RoleViewer); err != nil {
		return nil, err
	}
	skills, err := s.DisclosedSkills(ctx, a)
	if err != nil {
		return nil, err
	}
	idx := &DiscoveryIndex{Schema: DiscoverySchema, Skills: []DiscoveryEntry{}}
	for _, sk := range skills {
		data, err := s.archive(ctx, sk)
		if err != nil {
			return nil, err
		}
		idx.Skills = append(idx.Skills, DiscoveryEntry{Name: sk.Name, Type: DiscoveryTypeArchive, Description: sk.Description,
			URL: sk.Slug + "/" + DiscoveryArchiveName, Digest: archiveDigest(data)})
	}
	return idx, nil
}

// SkillArchive returns a skill's current version as the archive its
// discovery entry names (viewers and up). A skill the install policy
// withholds is not found, as it is not in the index.
func (s *Service) SkillArchive(ctx context.Context, a Actor, p SkillArchiveParams) (*SkillArchive, error) {
	if err := a.can(skilld.RoleViewer); err != nil {
		return nil, err
	}
	sk, err := s.DisclosedSkill(ctx, a, p.ID)
	if err != nil {
		return nil, err
	}
	data, err := s.archive(ctx, sk)
	if err != nil {
		return nil, err
	}
	return &SkillArchive{Name: sk.Name, Digest: archiveDigest(data), Size: int64(len(data)), Body: io.NopCloser(bytes.NewReader(data))}, nil
}

// PublicDiscoveryIndex is DiscoveryIndex of PublicDiscoveryWorkspace for
// a caller without a token. Whether to offer it at all is the operator's
// choice (skilld serve --public-discovery); the service only narrows it
// to that one workspace and to reading.
func (s *Service) PublicDiscoveryIndex(ctx context.Context) (*DiscoveryIndex, error) {
	a, err := s.publicDiscoveryActor(ctx)
	if err != nil {
		return nil, err
	}
	return s.DiscoveryIndex(ctx, a, DiscoveryIndexParams{})
}

// PublicSkillArchive is SkillArchive in PublicDiscoveryWorkspace for a
// caller without a token.
func (s *Service) PublicSkillArchive(ctx context.Context, p SkillArchiveParams) (*SkillArchive, error) {
	a, err := s.publicDiscoveryActor(ctx)
	if err != nil {
		return nil, err
	}
	arch, err := s.SkillArchive(ctx, a, p)
	if skilld.ErrorCode(err) == skilld.ENOTFOUND {
		// A caller without a token learns neither the policy nor which
		// withheld skills exist.
		return nil, skilld.Errorf(skilld.ENOTFOUND, "skill %q not found", p.ID)
	}
	return arch, err
}

// publicDiscoveryActor is a viewer of PublicDiscoveryWorkspace with no
// token behind it; only the two public discovery reads use it.
func (s *Service) publicDiscoveryActor(ctx context.Context) (Actor, error) {
	w, err := s.db.WorkspaceGet(ctx, &store.WorkspaceGetParams{Name: PublicDiscoveryWorkspace})
	if skilld.ErrorCode(err) == skilld.ENOTFOUND {
		return Actor{}, skilld.Errorf(skilld.ENOTFOUND, "no workspace %q to publish skills from", PublicDiscoveryWorkspace)
	}
	if err != nil {
		return Actor{}, err
	}
	return Actor{WorkspaceID: w.ID, Role: skilld.RoleViewer, Name: "public discovery", tokenWorkspace: w.ID}, nil
}

// archive builds the zip of a skill's current version from its stored,
// verified package, with its SKILL.md saying the name and description the
// skill is stored under (PublishedSkillMD).
func (s *Service) archive(ctx context.Context, sk *skilld.Skill) ([]byte, error) {
	digest, _, err := s.versionDigest(ctx, sk, 0)
	if err != nil {
		return nil, err
	}
	pkg, err := s.packages.Get(ctx, digest)
	if err != nil {
		return nil, err
	}
	files := pkg.Files()
	for i, f := range files {
		if pack.IsSkillMD(f.Path) {
			if files[i].Data, err = PublishedSkillMD(sk, f.Data); err != nil {
				return nil, err
			}
		}
	}
	var buf bytes.Buffer
	if err := pack.WriteZip(&buf, files); err != nil {
		return nil, fmt.Errorf("skill %q: %w", sk.Name, err)
	}
	return buf.Bytes(), nil
}

// PublishedSkillMD is a skill's SKILL.md as every surface that hands it
// out serves it (the discovery archive, MCP): its frontmatter saying the
// name and description the skill is stored under. A skill renamed, or
// created under a name other than its file's, would otherwise be published
// under one name by a file that claims another, and readers take the
// file's. It is data itself when the two already agree.
func PublishedSkillMD(sk *skilld.Skill, data []byte) ([]byte, error) {
	out, err := skillmd.WithIdentity(data, sk.Name, sk.Description)
	if err != nil {
		// The file was valid when it was stored.
		return nil, skilld.Errorf(skilld.EINTEGRITY, "the SKILL.md of skill %q cannot be published: %s", sk.Name, skilld.ErrorMessage(err))
	}
	return out, nil
}

func archiveDigest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}
