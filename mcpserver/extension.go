package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/goccy/go-yaml"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
)

// ExtensionSkills is the identifier of the MCP Skills extension (SEP-2640),
// declared in the server's capabilities.
const ExtensionSkills = "io.modelcontextprotocol/skills"

// Methods of the Skills extension.
const (
	methodSkillsList = "skills/list"
	methodSkillsGet  = "skills/get"
)

// skillsPageSize is how many entries one skills/list page carries: each
// entry is a full manifest, and reading its frontmatter costs a blob read.
const skillsPageSize = 50

// skillsTTL is the freshness hint (ttlMs) of skills/list, skills/get and
// the reads of skill:// resources, in milliseconds: skills change by
// explicit edits, so a minute is plenty, and digests catch anything that
// moved sooner.
const skillsTTL = 60000

// cacheScope is the scope of every result: what a token may see depends on
// its workspace and the install policy, so only its own client may cache.
const cacheScope = "private"

// SkillEntry is a Skill entry of the extension: the SKILL.md URI, its
// frontmatter verbatim and the complete manifest of its files.
type SkillEntry struct {
	URI         string          `json:"uri"`
	Frontmatter map[string]any  `json:"frontmatter"`
	Resources   []SkillResource `json:"resources"`
}

// SkillResource is one file of a SkillEntry.
type SkillResource struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

type skillsListParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

type skillsListResult struct {
	mcp.ResultBase
	ResultType string       `json:"resultType"`
	Skills     []SkillEntry `json:"skills"`
	NextCursor string       `json:"nextCursor,omitempty"`
	mcp.Cacheable
}

type skillsGetParams struct {
	mcp.ParamsBase
	URI string `json:"uri"`
}

type skillsGetResult struct {
	mcp.ResultBase
	ResultType string     `json:"resultType"`
	Skill      SkillEntry `json:"skill"`
	mcp.Cacheable
}

// registerExtension adds skills/list, skills/get and
// resources/directory/read as custom methods (go-sdk v1.8.0's
// AddReceivingCustomMethod); the capability itself is declared in New.
func (s *Server) registerExtension() error {
	if err := mcp.AddReceivingCustomMethod(s.mcp, methodSkillsList, s.skillsList); err != nil {
		return fmt.Errorf("registering %s: %w", methodSkillsList, err)
	}
	if err := mcp.AddReceivingCustomMethod(s.mcp, methodSkillsGet, s.skillsGet); err != nil {
		return fmt.Errorf("registering %s: %w", methodSkillsGet, err)
	}
	if err := mcp.AddReceivingCustomMethod(s.mcp, methodDirectoryRead, s.directoryRead); err != nil {
		return fmt.Errorf("registering %s: %w", methodDirectoryRead, err)
	}
	return nil
}

func (s *Server) skillsList(ctx context.Context, _ *mcp.ServerSession, p *skillsListParams) (*skillsListResult, error) {
	var cursor string
	if p != nil {
		cursor = p.Cursor
	}
	start, err := parseCursor(cursor)
	if err != nil {
		return nil, err
	}
	skills, err := s.disclosed(ctx)
	if err != nil {
		return nil, s.protocolError(err)
	}
	res := &skillsListResult{ResultType: "complete", Skills: []SkillEntry{}, Cacheable: mcp.Cacheable{TTLMs: skillsTTL, CacheScope: cacheScope}}
	end := min(start+skillsPageSize, len(skills))
	for i := start; i < end; i++ {
		e, err := s.entry(ctx, skills[i])
		if err != nil {
			return nil, s.protocolError(err)
		}
		res.Skills = append(res.Skills, *e)
	}
	if end < len(skills) {
		res.NextCursor = strconv.Itoa(end)
	}
	return res, nil
}

func (s *Server) skillsGet(ctx context.Context, _ *mcp.ServerSession, p *skillsGetParams) (*skillsGetResult, error) {
	var uri string
	if p != nil {
		uri = p.URI
	}
	name, file, err := parseURI(uri)
	if err != nil || !pack.IsSkillMD(file) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("%q is not the URI of a skill's SKILL.md (skill://<name>/SKILL.md)", uri)}
	}
	sk, err := s.skill(ctx, name)
	if skilld.ErrorCode(err) == skilld.ENOTFOUND {
		// The spec's code for a URI that names no skill the server serves;
		// a withheld skill is not served.
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("no skill at %s", uri)}
	}
	if err != nil {
		return nil, s.protocolError(err)
	}
	e, err := s.entry(ctx, sk)
	if err != nil {
		return nil, s.protocolError(err)
	}
	return &skillsGetResult{ResultType: "complete", Skill: *e, Cacheable: mcp.Cacheable{TTLMs: skillsTTL, CacheScope: cacheScope}}, nil
}

// entry builds a skill's extension entry: its frontmatter from the stored
// SKILL.md and every file with the digest and size the store verified.
func (s *Server) entry(ctx context.Context, sk *skilld.Skill) (*SkillEntry, error) {
	list, err := s.files(ctx, sk)
	if err != nil {
		return nil, err
	}
	e := &SkillEntry{Resources: make([]SkillResource, 0, len(list.Files))}
	for _, f := range list.Files {
		if pack.IsSkillMD(f.Path) {
			// Read in the listed version, so the frontmatter and the
			// digest describe the same bytes.
			data, served, err := s.readVersionFile(ctx, sk, list, f.Path, 0)
			if err != nil {
				return nil, err
			}
			f = served
			e.URI = fileURI(sk.Name, f.Path)
			if e.Frontmatter, err = frontmatter(data); err != nil {
				return nil, fmt.Errorf("skill %q: %w", sk.Name, err)
			}
		}
		e.Resources = append(e.Resources, SkillResource{URI: fileURI(sk.Name, f.Path), Digest: f.Digest, Size: f.Size})
	}
	if e.URI == "" {
		return nil, skilld.Errorf(skilld.EINTEGRITY, "skill %q has no SKILL.md in version %d", sk.Name, list.Version)
	}
	return e, nil
}

// frontmatter decodes a SKILL.md's YAML frontmatter into a JSON object,
// every field as the author wrote it (the extension asks for it verbatim).
// The file was validated when it was stored, so only its shape is checked.
func frontmatter(md []byte) (map[string]any, error) {
	md = bytes.TrimPrefix(md, []byte("\xEF\xBB\xBF"))
	first, rest, _ := bytes.Cut(md, []byte("\n"))
	if !isDelimiter(first) {
		return nil, skilld.Errorf(skilld.EINTEGRITY, "SKILL.md does not start with frontmatter")
	}
	var fm []byte
	for off := 0; off < len(rest); {
		line, _, found := bytes.Cut(rest[off:], []byte("\n"))
		if isDelimiter(line) {
			fm = rest[:off]
			break
		}
		if !found {
			return nil, skilld.Errorf(skilld.EINTEGRITY, "SKILL.md frontmatter is not closed")
		}
		off += len(line) + 1
	}
	out := map[string]any{}
	if err := yaml.Unmarshal(fm, &out); err != nil {
		return nil, skilld.Errorf(skilld.EINTEGRITY, "SKILL.md frontmatter: %w", err)
	}
	// Round-trip through JSON so every value is a JSON type (YAML maps
	// may decode with non-string keys or integer types JSON lacks).
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encoding the frontmatter: %w", err)
	}
	out = map[string]any{}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("decoding the frontmatter: %w", err)
	}
	return out, nil
}

func isDelimiter(line []byte) bool {
	return string(bytes.TrimRight(line, " \t\r")) == "---"
}

// protocolError turns a service error into a JSON-RPC error for methods
// that are not tools (resources, the extension): invalid and not-found
// requests are the client's (-32602), anything else is the server's, with
// internal details logged, not sent.
func (s *Server) protocolError(err error) error {
	code := skilld.ErrorCode(err)
	switch code {
	case skilld.EINVALID, skilld.ENOTFOUND:
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: skilld.ErrorMessage(err)}
	case skilld.EINTERNAL:
		s.opts.Logger.Error("mcp request failed", "err", err)
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("%s: %s", code, skilld.ErrorMessage(err))}
}
