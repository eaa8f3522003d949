package service

import (
	"context"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/importer"
)

type ImportGitHubParams struct {
	URL       string `json:"github_url" jsonschema:"repository, tree or blob URL on github.com, or git@github.com:owner/repo.git"`
	SkillName string `json:"skill_name,omitempty" jsonschema:"which skill to import when the repository holds several"`
	ImportAll bool   `json:"import_all,omitempty" jsonschema:"import every skill found (at most 10)"`
	Lenient   bool   `json:"lenient,omitempty" jsonschema:"accept unknown frontmatter keys, reporting them as warnings"`
}

// ImportResult holds the skills an import created.
type ImportResult struct {
	Items []*SkillView `json:"items"`
}

// ImportGitHub imports skills from a GitHub repository (members and up).
// GitHub counts as registry "github" with trust "community" for the
// install policy, asked before anything is downloaded. Each skill is
// created all or nothing; with several, the first failure stops the import
// and reports which skills were created before it.
func (s *Service) ImportGitHub(ctx context.Context, a Actor, p ImportGitHubParams) (*ImportResult, error) {
	if err := a.can(skilld.RoleMember); err != nil {
		return nil, err
	}
	if s.github == nil {
		return nil, skilld.Errorf(skilld.EUNAVAILABLE, "GitHub imports are not configured on this server")
	}
	if err := s.limitImports(a); err != nil {
		return nil, err
	}
	src, err := importer.ParseGitHubURL(p.URL)
	if err != nil {
		return nil, err
	}
	if err := s.checkInstall(ctx, a.WorkspaceID, GitHubRegistry, GitHubTrust, src.Owner+"/"+src.Repo, nil, nil); err != nil {
		return nil, err
	}
	chosen, _, err := s.github.Import(ctx, src, p.SkillName, p.ImportAll)
	if err != nil {
		return nil, err
	}
	out := &ImportResult{Items: []*SkillView{}}
	for _, c := range chosen {
		dir := c.Name
		if c.Path == "" {
			dir = "" // a repository's name is not a skill folder's
		}
		v, err := s.createFromPackage(ctx, a, c.Package, dir, SkillOptions{Lenient: p.Lenient},
			source{typ: skilld.SourceGitHub, url: c.SourceURL, registry: GitHubRegistry, trust: GitHubTrust})
		if err != nil {
			if len(out.Items) > 0 {
				return out, skilld.Errorf(skilld.ErrorCode(err), "importing %q (after %d skills were imported): %s", c.Path, len(out.Items), skilld.ErrorMessage(err))
			}
			return nil, err
		}
		out.Items = append(out.Items, v)
	}
	return out, nil
}
