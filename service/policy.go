package service

import (
	"context"
	"fmt"
	"slices"
	"strings"

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
		if err := s.checkFindingRule(i, r); err != nil {
			return nil, err
		}
		if err := checkRequirement(i, r); err != nil {
			return nil, err
		}
		if err := checkPreapproval(i, &p.InstallRules[i]); err != nil {
			return nil, err
		}
	}
	pol, err := s.db.PolicyPut(ctx, &store.PolicyPutParams{WorkspaceID: a.WorkspaceID, InstallRules: p.InstallRules, Tools: p.Tools})
	if err != nil {
		return nil, err
	}
	s.event(ctx, a, a.WorkspaceID, "policy.updated", a.WorkspaceID)
	return pol, nil
}

// Withheld is the install rule that refuses a skill, with the finding
// that made a rule on findings match, or why the package failed the
// rule's require_signature.
type Withheld struct {
	Index     int                `json:"index"`
	Rule      skilld.InstallRule `json:"rule"`
	Finding   *skilld.Finding    `json:"finding,omitempty"`
	Signature string             `json:"signature,omitempty"`
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
	s += findingsClause(w.Rule)
	s += signatureClause(w.Rule.RequireSignature)
	s += ")"
	if f := w.Finding; f != nil {
		s += fmt.Sprintf(": %s finding %s in %s", f.Severity, f.Rule, f.File)
		if f.Line > 0 {
			s += fmt.Sprintf(":%d", f.Line)
		}
	}
	if w.Signature != "" {
		s += ": " + w.Signature
	}
	return s
}

// Decide evaluates install rules for a skill from registry with trust,
// whose package's scan found findings: the first rule that matches
// decides, and when none matches the skill is allowed. A rule matches
// when its registry (if any) is the skill's; a min_trust makes a deny rule
// match skills trusted less than that level and an allow rule match skills
// trusted at least that much; max_severity and rules make a deny rule
// match packages with a finding at or above the severity or of one of the
// rules, and an allow rule match packages without one. It returns the
// denying rule, or nil when the skill is allowed. Skills without a registry
// (written in the workspace) are always allowed. findings may be nil when
// no rule looks at them (NeedsFindings). Decide does not know signatures:
// a require_signature rule is passed as if the package met it, as the
// service asks again with the package's signature (decide).
func Decide(rules []skilld.InstallRule, registry string, trust skilld.Trust, findings []skilld.Finding) *Withheld {
	return decision(rules, registry, trust, findings, nil)
}

func decision(rules []skilld.InstallRule, registry string, trust skilld.Trust, findings []skilld.Finding, signed *signedPackage) *Withheld {
	if d := deciding(rules, registry, trust, findings, signed); d.index >= 0 && rules[d.index].Effect == skilld.EffectDeny {
		w := &Withheld{Index: d.index, Rule: rules[d.index], Finding: d.finding}
		if d.unsigned != nil {
			w.Signature = d.unsigned.Error()
		}
		return w
	}
	return nil
}

// decided is the rule that decides about a skill (index -1: none), with
// the finding that made a rule on findings match and why the package
// failed a require_signature rule.
type decided struct {
	index    int
	finding  *skilld.Finding
	unsigned error
}

// deciding is the rule that decides about a skill from registry with
// trust, findings and signature (see Decide). A nil signed (the package
// is not chosen yet) passes every require_signature.
func deciding(rules []skilld.InstallRule, registry string, trust skilld.Trust, findings []skilld.Finding, signed *signedPackage) decided {
	if registry == "" {
		return decided{index: -1}
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
		var hit *skilld.Finding
		if r.OnFindings() {
			hit = matchingFinding(r, findings)
			if r.Effect == skilld.EffectDeny && hit == nil || r.Effect == skilld.EffectAllow && hit != nil {
				continue
			}
		}
		var bad error
		if r.RequireSignature != nil && signed != nil {
			bad = signed.check(r.RequireSignature)
		}
		if r.RequireSignature != nil && (r.Effect == skilld.EffectDeny && bad == nil || r.Effect == skilld.EffectAllow && bad != nil) {
			continue
		}
		return decided{index: i, finding: hit, unsigned: bad}
	}
	return decided{index: -1}
}

// NeedsFindings reports whether deciding by rules for a skill of registry
// needs its package's findings, which may have to be scanned first.
func NeedsFindings(rules []skilld.InstallRule, registry string) bool {
	return registry != "" && slices.ContainsFunc(rules, skilld.InstallRule.OnFindings)
}

// Check asks the workspace's install policy about a skill's current
// version now: it returns the rule that withholds the skill, or nil.
func (s *Service) Check(ctx context.Context, workspaceID string, sk *skilld.Skill) (*Withheld, error) {
	pol, err := s.db.PolicyGet(ctx, &store.PolicyGetParams{WorkspaceID: workspaceID})
	if err != nil {
		return nil, err
	}
	return s.decide(ctx, pol.InstallRules, sk.Registry, sk.Trust, s.storedFindings(sk.Digest), s.catalogSigned(sk.CatalogItemID, sk.CatalogVersion, sk.Digest))
}

// findingsFunc gives the findings of a package when a rule needs them;
// nil when the package is not known yet.
type findingsFunc func(ctx context.Context) ([]skilld.Finding, error)

// storedFindings reads (or scans) the findings of a stored package.
func (s *Service) storedFindings(digest string) findingsFunc {
	if digest == "" {
		return nil
	}
	return func(ctx context.Context) ([]skilld.Finding, error) {
		sc, err := s.packages.Scan(ctx, digest)
		if err != nil {
			return nil, err
		}
		return sc.Findings, nil
	}
}

// decide is Decide with the findings and the signature asked for only
// when a rule needs them.
func (s *Service) decide(ctx context.Context, rules []skilld.InstallRule, registry string, trust skilld.Trust, found findingsFunc, signed signedFunc) (*Withheld, error) {
	findings, err := neededFindings(ctx, rules, registry, found)
	if err != nil {
		return nil, err
	}
	sp, err := neededSignature(ctx, rules, registry, signed)
	if err != nil {
		return nil, err
	}
	return decision(rules, registry, trust, findings, sp), nil
}

// neededSignature loads a package's signature (signed) when some rule
// about skills of registry requires one, and nothing otherwise.
func neededSignature(ctx context.Context, rules []skilld.InstallRule, registry string, signed signedFunc) (*signedPackage, error) {
	if signed == nil || registry == "" || !slices.ContainsFunc(rules, func(r skilld.InstallRule) bool { return r.RequireSignature != nil }) {
		return nil, nil
	}
	return signed(ctx)
}

// neededFindings reads a package's findings (found) when some rule about
// skills of registry looks at them, and nothing otherwise.
func neededFindings(ctx context.Context, rules []skilld.InstallRule, registry string, found findingsFunc) ([]skilld.Finding, error) {
	if found == nil || !NeedsFindings(rules, registry) {
		return nil, nil
	}
	return found(ctx)
}

// checkInstall refuses an install, import or update that the policy
// denies, with the rule in the message. found gives the package's
// findings; with nil (the package is not chosen yet) only rules that do
// not look at findings can refuse, and the caller asks again once it is.
func (s *Service) checkInstall(ctx context.Context, workspaceID, registry string, trust skilld.Trust, name string, found findingsFunc, signed signedFunc) error {
	pol, err := s.db.PolicyGet(ctx, &store.PolicyGetParams{WorkspaceID: workspaceID})
	if err != nil {
		return err
	}
	w, err := s.decide(ctx, pol.InstallRules, registry, trust, found, signed)
	if err != nil || w == nil {
		return err
	}
	return &skilld.Error{Code: skilld.EFORBIDDEN,
		Message: fmt.Sprintf("%s refuses %q from registry %q (trust %s)", w, name, registry, trust),
		Details: []skilld.Detail{{Field: fmt.Sprintf("install_rules[%d]", w.Index), Message: w.String()}}}
}

// findingsClause describes a rule's matchers on findings, for messages.
func findingsClause(r skilld.InstallRule) string {
	var s string
	if r.MaxSeverity != "" {
		s += fmt.Sprintf(" with findings at or above %s", r.MaxSeverity)
	}
	if len(r.Rules) > 0 {
		if r.MaxSeverity != "" {
			s += " or"
		}
		s += fmt.Sprintf(" with findings of %s", strings.Join(r.Rules, ", "))
	}
	return s
}

// signatureClause describes a rule's require_signature, for messages.
func signatureClause(req *skilld.SignatureRequirement) string {
	switch {
	case req == nil:
		return ""
	case req.Key:
		return " require_signature by the registry key"
	}
	s := " require_signature"
	if req.Issuer != "" {
		s += fmt.Sprintf(" issuer ~ %q", req.Issuer)
	}
	if req.Subject != "" {
		s += fmt.Sprintf(" subject ~ %q", req.Subject)
	}
	return s
}

// matchingFinding returns the first finding of the worst severity among
// those the rule's max_severity or rules match, or nil.
func matchingFinding(r skilld.InstallRule, findings []skilld.Finding) *skilld.Finding {
	var hit *skilld.Finding
	for i, f := range findings {
		if r.MaxSeverity != "" && f.Severity.Rank() >= r.MaxSeverity.Rank() || slices.Contains(r.Rules, f.Rule) {
			if hit == nil || f.Severity.Rank() > hit.Severity.Rank() {
				hit = &findings[i]
			}
		}
	}
	return hit
}

// checkFindingRule validates rule i's matchers on findings: a known
// severity, and rule IDs the scanner has.
func (s *Service) checkFindingRule(i int, r skilld.InstallRule) error {
	if r.MaxSeverity != "" && !r.MaxSeverity.Valid() {
		return invalidField(fmt.Sprintf("install_rules[%d].max_severity", i), "max_severity must be info, low, medium, high or critical, not %q", r.MaxSeverity)
	}
	var known []string
	if s.packages.Scanner != nil {
		for _, sr := range s.packages.Scanner.Rules() {
			known = append(known, sr.ID)
		}
	}
	for j, id := range r.Rules {
		if !slices.Contains(known, id) {
			return invalidField(fmt.Sprintf("install_rules[%d].rules[%d]", i, j), "rules names scanner rules; %q is not one (docs/TRUST.md lists them)", id)
		}
	}
	return nil
}
