package mcpserver

import (
	"context"
	"mime"
	"net/url"
	"path"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/service"
)

const (
	uriScheme = "skill"
	// metaDigest and metaVersion are the _meta keys of a skill file
	// resource: the file's content digest ("sha256:<hex>" of its bytes,
	// the same digest skills/list publishes) and the skill version it
	// belongs to.
	metaDigest  = "skilld/digest"
	metaVersion = "skilld/version"
)

// disclosed lists the workspace's skills the install policy lets the
// actor see, by name. Withheld skills are left out entirely: not listed,
// not in the enum, not readable. The policy is asked now, as a run asks it
// at start (service.Decide, the rule every surface shares).
// The list is shared between sessions (see view): it must not be changed.
func (s *Server) disclosed(ctx context.Context) ([]*skilld.Skill, error) {
	v, err := s.current(ctx)
	if err != nil {
		return nil, err
	}
	return v.skills, nil
}

// skill finds one disclosed skill by its name. A withheld skill and one
// that does not exist get the same not_found: the client must not learn
// what the policy hides.
func (s *Server) skill(ctx context.Context, name string) (*skilld.Skill, error) {
	if strings.TrimSpace(name) == "" {
		return nil, skilld.Errorf(skilld.EINVALID, "skill_name is required")
	}
	// While the workspace's revision stands, its view says which skills
	// are disclosed: asking for the revision is all a call costs.
	rev, err := s.svc.DisclosedRevision(ctx, s.actor)
	if err != nil {
		return nil, err
	}
	if rev == "" {
		// Without a revision, a skill's slug is nearly always its name:
		// one lookup instead of listing the workspace on every call.
		if sk, err := s.svc.DisclosedSkill(ctx, s.actor, name); err == nil && sk.Name == name {
			return sk, nil
		} else if err != nil && skilld.ErrorCode(err) != skilld.ENOTFOUND {
			return nil, err
		}
	}
	v, err := s.viewAt(ctx, rev)
	if err != nil {
		return nil, err
	}
	if sk := v.byName[name]; sk != nil {
		return sk, nil
	}
	return nil, notServed(name)
}

// notServed is the answer for a skill that is withheld or does not exist:
// the same for both.
func notServed(name string) error {
	return skilld.Errorf(skilld.ENOTFOUND, "no skill named %q is available in this workspace; list_skills shows the available ones", name)
}

// files lists the files of the skill's current version.
func (s *Server) files(ctx context.Context, sk *skilld.Skill) (*service.SkillFiles, error) {
	return s.svc.ListSkillFiles(ctx, s.actor, service.ListSkillFilesParams{SkillRef: service.SkillRef{ID: sk.ID}})
}

// fileURI is the resource URI of a file of a skill:
// skill://<name>/<path>, as the Skills extension lays them out.
func fileURI(skill, file string) string {
	u := url.URL{Scheme: uriScheme, Host: skill, Path: "/" + file}
	return u.String()
}

// parseURI splits a skill:// URI into skill name and file path.
func parseURI(uri string) (skill, file string, err error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != uriScheme || u.Host == "" || len(u.Path) < 2 || u.RawQuery != "" || u.Fragment != "" {
		return "", "", skilld.Errorf(skilld.EINVALID, "%q is not a skill file URI: use skill://<skill name>/<path in the skill>", uri)
	}
	return u.Host, strings.TrimPrefix(u.Path, "/"), nil
}

// fileResource describes one file as an MCP resource.
func fileResource(sk *skilld.Skill, version int, f skilld.PackageFile) *mcp.Resource {
	r := &mcp.Resource{
		URI:      fileURI(sk.Name, f.Path),
		Name:     sk.Name + "/" + f.Path,
		Title:    f.Path + " of skill " + sk.Name,
		MIMEType: mimeType(f.Path),
		Size:     f.Size,
		Meta:     mcp.Meta{metaDigest: f.Digest, metaVersion: version},
	}
	if pack.IsSkillMD(f.Path) {
		// The extension asks for the skill's name and description on its
		// SKILL.md resource.
		r.Name, r.Description = sk.Name, sk.Description
	}
	return r
}

// mimeType guesses a file's type from its name; SKILL.md is Markdown, as
// the extension says, and unknown text-like files are plain text.
func mimeType(p string) string {
	ext := strings.ToLower(path.Ext(p))
	switch ext {
	case ".md", ".markdown":
		return "text/markdown"
	case "", ".txt", ".sh", ".py", ".go", ".js", ".mjs", ".ts", ".rb", ".toml", ".yaml", ".yml", ".csv":
		return "text/plain"
	}
	if t := mime.TypeByExtension(ext); t != "" {
		return t
	}
	return "application/octet-stream"
}
