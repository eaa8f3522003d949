package service

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

// DisclosedSkills lists the workspace's skills that its install policy
// does not withhold, by name (viewers and up): what the MCP server and the
// discovery index offer, with the rule a task's snapshot applies (Decide).
func (s *Service) DisclosedSkills(ctx context.Context, a Actor) ([]*skilld.Skill, error) {
	if err := a.can(skilld.RoleViewer); err != nil {
		return nil, err
	}
	pol, err := s.db.PolicyGet(ctx, &store.PolicyGetParams{WorkspaceID: a.WorkspaceID})
	if err != nil {
		return nil, err
	}
	skills, err := s.workspaceSkills(ctx, a.WorkspaceID)
	if err != nil {
		return nil, err
	}
	var out []*skilld.Skill
	for _, sk := range skills {
		w, err := s.decide(ctx, pol.InstallRules, sk.Registry, sk.Trust, s.storedFindings(sk.Digest), s.catalogSigned(sk.CatalogItemID, sk.CatalogVersion, sk.Digest))
		if err != nil {
			return nil, err
		}
		if w == nil {
			out = append(out, sk)
		}
	}
	return out, nil
}

// workspaceSkills lists every skill of workspace ws, by name.
func (s *Service) workspaceSkills(ctx context.Context, ws string) ([]*skilld.Skill, error) {
	var out []*skilld.Skill
	for page := (store.Page{Limit: store.MaxPageSize}); ; {
		res, err := s.db.SkillList(ctx, &store.SkillListParams{WorkspaceID: ws, Page: page})
		if err != nil {
			return nil, err
		}
		for _, it := range res.Items {
			if it.Skill != nil {
				out = append(out, it.Skill)
			}
		}
		page.Offset += len(res.Items)
		if len(res.Items) == 0 || page.Offset >= res.Total {
			return out, nil
		}
	}
}

// DisclosedRevision returns a value that changes whenever what
// DisclosedSkills answers for the actor's workspace may change (viewers and
// up): the workspace's list revision with its install rules (and the
// scanner's rules when they look at findings). A caller may
// keep an answer read after the revision while the revision stands. It is
// "" when no such value exists: a rule requiring a signature depends on
// registry keys the revision does not follow, so such answers are asked
// for each time.
func (s *Service) DisclosedRevision(ctx context.Context, a Actor) (string, error) {
	if err := a.can(skilld.RoleViewer); err != nil {
		return "", err
	}
	rev, err := s.db.SkillListRevision(ctx, a.WorkspaceID)
	if err != nil {
		return "", err
	}
	pol, err := s.db.PolicyGet(ctx, &store.PolicyGetParams{WorkspaceID: a.WorkspaceID})
	if err != nil {
		return "", err
	}
	if slices.ContainsFunc(pol.InstallRules, func(r skilld.InstallRule) bool { return r.RequireSignature != nil }) {
		return "", nil
	}
	rules, err := json.Marshal(pol.InstallRules)
	if err != nil {
		return "", fmt.Errorf("encoding the install rules: %w", err)
	}
	// Findings follow from the package and the scanner's rules, which an
	// update of the rules changes.
	if slices.ContainsFunc(pol.InstallRules, skilld.InstallRule.OnFindings) && s.packages.Scanner != nil {
		rules = fmt.Appendf(rules, "\n%d", s.packages.Scanner.Version())
	}
	sum := sha256.Sum256(rules)
	return rev + "/" + hex.EncodeToString(sum[:8]), nil
}

// DisclosedSkill finds one skill (ID or slug) that the install policy
// does not withhold (viewers and up); a withheld one is ENOTFOUND, naming
// the rule.
func (s *Service) DisclosedSkill(ctx context.Context, a Actor, ref string) (*skilld.Skill, error) {
	if err := a.can(skilld.RoleViewer); err != nil {
		return nil, err
	}
	sk, err := s.skill(ctx, a, ref)
	if err != nil {
		return nil, err
	}
	w, err := s.Check(ctx, a.WorkspaceID, sk)
	if err != nil {
		return nil, err
	}
	if w != nil {
		return nil, skilld.Errorf(skilld.ENOTFOUND, "skill %q is not disclosed: %s withholds it", ref, w)
	}
	return sk, nil
}
