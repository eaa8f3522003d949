package service

import (
	"context"
	"fmt"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/policy"
	"github.com/skilld/skilld/store"
)

type GetPolicyParams struct{}

// GetPolicy returns the workspace's install rules and tool policy (viewers
// and up).
func (s *Service) GetPolicy(ctx context.Context, a Actor, _ GetPolicyParams) (*skilld.Policy, error) {
	if err := a.can(skilld.RoleViewer); err != nil {
		return nil, err
	}
	return s.db.PolicyGet(ctx, &store.PolicyGetParams{WorkspaceID: a.WorkspaceID})
}

type PutPolicyParams struct {
	InstallRules []skilld.InstallRule `json:"install_rules" jsonschema:"rules checked in order; the first that matches decides; none matching allows"`
	Tools        skilld.ToolPolicy    `json:"tools" jsonschema:"tool policy: denied, allowed and require_approval globs"`
}

// PutPolicy replaces the workspace's policy (admins only).
func (s *Service) PutPolicy(ctx context.Context, a Actor, p PutPolicyParams) (*skilld.Policy, error) {
	if err := a.can(skilld.RoleAdmin); err != nil {
		return nil, err
	}
	if err := policy.Validate("tools", p.Tools); err != nil {
		return nil, err
	}
	for i, r := range p.InstallRules {
		if r.Effect != skilld.EffectAllow && r.Effect != skilld.EffectDeny {
			return nil, invalidField(fmt.Sprintf("install_rules[%d].effect", i), "effect must be allow or deny, not %q", r.Effect)
		}
		if n := r.EvalMaxRegression; n != nil && (r.Effect != skilld.EffectAllow || *n < 0 || *n > 100) {
			return nil, invalidField(fmt.Sprintf("install_rules[%d].eval_max_regression", i), "eval_max_regression is a number of points from 0 to 100, on an allow rule")
		}
		if r.MinTrust != "" && !r.MinTrust.Valid() {
			return nil, invalidField(fmt.Sprintf("install_rules[%d].min_trust", i), "min_trust must be official, verified or community, not %q", r.MinTrust)
		}
	}
	pol, err := s.db.PolicyPut(ctx, &store.PolicyPutParams{WorkspaceID: a.WorkspaceID, InstallRules: p.InstallRules, Tools: p.Tools})
	if err != nil {
		return nil, err
	}
	s.event(ctx, a, a.WorkspaceID, "policy.updated", a.WorkspaceID)
	return pol, nil
}

// Withheld is the install rule that refuses a skill.
type Withheld struct {
	Index int                `json:"index"`
	Rule  skilld.InstallRule `json:"rule"`
}

func (w *Withheld) String() string {
	s := fmt.Sprintf("install policy rule %d (%s", w.Index+1, w.Rule.Effect)
	if w.Rule.Registry != "" {
		s += fmt.Sprintf(" registry %q", w.Rule.Registry)
	}
	if w.Rule.MinTrust != "" {
		s += fmt.Sprintf(" below trust %q", w.Rule.MinTrust)
	}
	if n := w.Rule.EvalMaxRegression; n != nil {
		s += fmt.Sprintf(" eval_max_regression %g", *n)
	}
	return s + ")"
}

// Decide evaluates install rules for a skill from registry with trust: the
// first rule that matches decides, and when none matches the skill is
// allowed. A rule matches when its registry (if any) is the skill's; a
// min_trust makes a deny rule match skills trusted less than that level and
// an allow rule match skills trusted at least that much. It returns the
// denying rule, or nil when the skill is allowed. Skills without a registry
// (written in the workspace) are always allowed.
func Decide(rules []skilld.InstallRule, registry string, trust skilld.Trust) *Withheld {
	if i := deciding(rules, registry, trust); i >= 0 && rules[i].Effect == skilld.EffectDeny {
		return &Withheld{Index: i, Rule: rules[i]}
	}
	return nil
}

// deciding is the index of the rule that decides about a skill from
// registry with trust (see Decide), or -1 when none does.
func deciding(rules []skilld.InstallRule, registry string, trust skilld.Trust) int {
	if registry == "" {
		return -1
	}
	for i, r := range rules {
		if r.Registry != "" && r.Registry != registry {
			continue
		}
		if r.MinTrust != "" {
			below := trust.Rank() < r.MinTrust.Rank()
			if r.Effect == skilld.EffectDeny && !below || r.Effect == skilld.EffectAllow && below {
				continue
			}
		}
		return i
	}
	return -1
}

// Check asks the workspace's install policy about a skill now: it returns
// the rule that withholds the skill, or nil. Runs call it at start, so a
// rule written after a skill was installed still applies.
func (s *Service) Check(ctx context.Context, workspaceID string, sk *skilld.Skill) (*Withheld, error) {
	pol, err := s.db.PolicyGet(ctx, &store.PolicyGetParams{WorkspaceID: workspaceID})
	if err != nil {
		return nil, err
	}
	return Decide(pol.InstallRules, sk.Registry, sk.Trust), nil
}

// checkInstall refuses an install or import that the policy denies, with
// the rule in the message.
func (s *Service) checkInstall(ctx context.Context, workspaceID, registry string, trust skilld.Trust, name string) error {
	w, err := s.Check(ctx, workspaceID, &skilld.Skill{Registry: registry, Trust: trust})
	if err != nil || w == nil {
		return err
	}
	return &skilld.Error{Code: skilld.EFORBIDDEN,
		Message: fmt.Sprintf("%s refuses %q from registry %q (trust %s)", w, name, registry, trust),
		Details: []skilld.Detail{{Field: fmt.Sprintf("install_rules[%d]", w.Index), Message: w.String()}}}
}
