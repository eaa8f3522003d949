package service

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/permissions"
	"github.com/skilld/skilld/store"
)

// Permission states of a skill's current package.
const (
	// PermissionsNone: the package asks for nothing.
	PermissionsNone = "none"
	// PermissionsNeeded: it asks for something no approval covers; runs
	// get no grants for it.
	PermissionsNeeded = "approval_needed"
	// PermissionsApproved: an approval (of this package, or of an earlier
	// one asking for at least as much) covers what it asks for.
	PermissionsApproved = "approved"
)

// SkillPermissions is what a skill's current package asks for in its
// skilld.yaml and what of it is approved.
type SkillPermissions struct {
	Requested permissions.Request `json:"requested"`
	// Approved is the approval that covers Requested (the one of this
	// digest when there is one), or null.
	Approved *permissions.Request `json:"approved"`
	Digest   string               `json:"digest"`
	State    string               `json:"state"`
	// ApprovedDigest, ApprovedBy: which package's approval covers it, and
	// who gave it, for the web UI; the API's answer keeps to the four
	// fields above.
	ApprovedDigest string `json:"-"`
	ApprovedBy     string `json:"-"`
}

// GetSkillPermissions returns what the skill's current package asks for
// and whether it is approved (viewers and up).
func (s *Service) GetSkillPermissions(ctx context.Context, a Actor, p GetSkillParams) (*SkillPermissions, error) {
	if err := a.can(skilld.RoleViewer); err != nil {
		return nil, err
	}
	sk, err := s.skill(ctx, a, p.ID)
	if err != nil {
		return nil, err
	}
	return s.skillPermissions(ctx, sk, sk.Digest)
}

type ApprovePermissionsParams struct {
	SkillRef
	Digest string `json:"digest" jsonschema:"the package digest (sha256:…) whose request is approved: the skill's current one, one of its versions', or a catalog version it may update to"`
}

// ApprovePermissions approves what the package Digest of a skill asks for
// (admins). The digest must be the skill's: its current package, one of
// its versions, or, for an installed skill, a version of its catalog item
// (to let a held update through).
func (s *Service) ApprovePermissions(ctx context.Context, a Actor, p ApprovePermissionsParams) (*SkillPermissions, error) {
	if err := a.can(skilld.RoleAdmin); err != nil {
		return nil, err
	}
	sk, err := s.skill(ctx, a, p.ID)
	if err != nil {
		return nil, err
	}
	digest := p.Digest
	if digest == "" {
		digest = sk.Digest
	}
	known, err := s.skillDigests(ctx, a, sk)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(known, digest) {
		return nil, &skilld.Error{Code: skilld.EINVALID, Message: fmt.Sprintf("%s is not a package of skill %q (neither its current one, one of its versions', nor a version of its catalog item)", digest, sk.Name),
			Details: []skilld.Detail{{Field: "digest", Message: "not a package of this skill"}}}
	}
	req, err := s.packageRequest(ctx, digest, nil)
	if err != nil {
		return nil, err
	}
	if _, err := s.db.PermissionApprovalPut(ctx, &store.PermissionApprovalPutParams{WorkspaceID: a.WorkspaceID, SkillID: sk.ID, Digest: digest, Approved: req, ApprovedBy: a.Name}); err != nil {
		return nil, err
	}
	s.event(ctx, a, a.WorkspaceID, "skill.permissions_approved", sk.ID)
	return s.skillPermissions(ctx, sk, digest)
}

// skillDigests lists the packages an approval of the skill may name.
func (s *Service) skillDigests(ctx context.Context, a Actor, sk *skilld.Skill) ([]string, error) {
	out := []string{sk.Digest}
	vs, err := s.allVersions(ctx, a, sk.ID)
	if err != nil {
		return nil, err
	}
	for _, v := range vs {
		out = append(out, v.Digest)
	}
	if sk.CatalogItemID == "" {
		return out, nil
	}
	for offset := 0; ; offset += store.MaxPageSize {
		ivs, err := s.db.CatalogItemVersionList(ctx, &store.CatalogItemVersionListParams{ItemID: sk.CatalogItemID, Page: store.Page{Limit: store.MaxPageSize, Offset: offset}})
		if err != nil {
			return nil, err
		}
		for _, v := range ivs {
			out = append(out, v.Digest)
		}
		if len(ivs) < store.MaxPageSize {
			return out, nil
		}
	}
}

// skillPermissions decides the state of the skill's package digest.
func (s *Service) skillPermissions(ctx context.Context, sk *skilld.Skill, digest string) (*SkillPermissions, error) {
	req, err := s.packageRequest(ctx, digest, nil)
	if err != nil {
		return nil, err
	}
	return s.decidePermissionsOf(ctx, sk, digest, req, nil)
}

// decidePermissionsOf decides req of sk's package digest by the skill's
// approvals, then by the workspace's pre-approving install rules (rules,
// when the caller has them; read otherwise).
func (s *Service) decidePermissionsOf(ctx context.Context, sk *skilld.Skill, digest string, req permissions.Request, rules []skilld.InstallRule) (*SkillPermissions, error) {
	approvals, err := s.db.PermissionApprovalList(ctx, &store.PermissionApprovalListParams{WorkspaceID: sk.WorkspaceID, SkillID: sk.ID})
	if err != nil {
		return nil, err
	}
	out := decidePermissions(digest, req, approvals)
	if out.State != PermissionsNeeded {
		return out, nil
	}
	if rules == nil {
		pol, err := s.db.PolicyGet(ctx, &store.PolicyGetParams{WorkspaceID: sk.WorkspaceID})
		if err != nil {
			return nil, err
		}
		rules = pol.InstallRules
	}
	if i, ok := preapproving(rules, sk.Registry, sk.Trust, req); ok {
		approved := req.Normalized()
		out.State, out.Approved, out.ApprovedBy, out.ApprovedDigest = PermissionsApproved, &approved, fmt.Sprintf("install policy rule %d", i+1), digest
	}
	return out, nil
}

// preapproving finds the allow rule with approve_permissions that matches
// a skill of registry ("" for one written in the workspace) and trust and
// covers req.
func preapproving(rules []skilld.InstallRule, registry string, trust skilld.Trust, req permissions.Request) (int, bool) {
	for i, r := range rules {
		g := r.ApprovePermissions
		switch {
		case g == nil || r.Effect != skilld.EffectAllow:
			continue
		case r.Registry != "" && r.Registry != registry:
			continue
		case r.MinTrust != "" && (registry == "" || trust.Rank() < r.MinTrust.Rank()):
			continue
		}
		if permissions.Covers(permissions.Request{Network: g.Network, Secrets: g.Secrets}, req) {
			return i, true
		}
	}
	return 0, false
}

// checkPreapproval checks rule i's approve_permissions (lowercasing its
// hosts): on an allow rule, matching by registry and trust alone.
func checkPreapproval(i int, r *skilld.InstallRule) error {
	g := r.ApprovePermissions
	if g == nil {
		return nil
	}
	field := fmt.Sprintf("install_rules[%d].approve_permissions", i)
	if r.Effect != skilld.EffectAllow || r.OnFindings() || r.RequireSignature != nil || r.EvalMaxRegression != nil {
		return invalidField(field, "approve_permissions goes on an allow rule that matches by registry and min_trust alone (no max_severity, rules, require_signature or eval_max_regression)")
	}
	if len(g.Network)+len(g.Secrets) == 0 {
		return invalidField(field, "approve_permissions names no host and no secret")
	}
	for j, h := range g.Network {
		host, err := permissions.CheckHost(h)
		if err != nil {
			return invalidField(fmt.Sprintf("%s.network[%d]", field, j), "%v", err)
		}
		g.Network[j] = host
	}
	for j, n := range g.Secrets {
		if err := permissions.CheckSecretName(n); err != nil {
			return invalidField(fmt.Sprintf("%s.secrets[%d]", field, j), "%v", err)
		}
	}
	return nil
}

// decidePermissions: the approval of digest itself when it covers req,
// else the newest approval of another package that does.
func decidePermissions(digest string, req permissions.Request, approvals []store.PermissionApproval) *SkillPermissions {
	out := &SkillPermissions{Requested: req.Normalized(), Digest: digest, State: PermissionsNeeded}
	if req.Empty() {
		out.State = PermissionsNone
	}
	slices.SortStableFunc(approvals, func(x, y store.PermissionApproval) int {
		return boolCmp(x.Digest != digest, y.Digest != digest)
	})
	for _, ap := range approvals {
		if permissions.Covers(ap.Approved, req) {
			approved := ap.Approved.Normalized()
			out.Approved, out.ApprovedDigest, out.ApprovedBy = &approved, ap.Digest, ap.ApprovedBy
			if out.State == PermissionsNeeded {
				out.State = PermissionsApproved
			}
			break
		}
	}
	return out
}

func boolCmp(x, y bool) int {
	switch {
	case x == y:
		return 0
	case !x:
		return -1
	}
	return 1
}

// packageRequest reads what a stored package asks for. files, when the
// caller has listed them, saves listing them again. A declaration with
// errors asks for its valid entries: the scanner reports the rest.
func (s *Service) packageRequest(ctx context.Context, digest string, files []skilld.PackageFile) (permissions.Request, error) {
	if files == nil {
		if v, ok := s.invocations.get(digest); ok {
			return v.request, nil
		}
		var err error
		if files, err = s.db.PackageFileList(ctx, &store.PackageFileListParams{Digest: digest}); err != nil {
			return permissions.Request{}, err
		}
	}
	facts, err := s.skillFacts(ctx, digest, files)
	return facts.request, err
}

// checkPermissionsCovered holds a catalog update whose package asks for
// more than any approval of the skill covers: ECONFLICT naming the digest
// an admin approves to let it through.
func (s *Service) checkPermissionsCovered(ctx context.Context, sk *skilld.Skill, digest, what string) error {
	p, err := s.skillPermissions(ctx, sk, digest)
	if err != nil || p.State != PermissionsNeeded {
		return err
	}
	var asks []string
	if len(p.Requested.Network) > 0 {
		asks = append(asks, "network "+strings.Join(p.Requested.Network, ", "))
	}
	if len(p.Requested.Secrets) > 0 {
		asks = append(asks, "secrets "+strings.Join(p.Requested.Secrets, ", "))
	}
	if len(p.Requested.Tools) > 0 {
		asks = append(asks, "tools "+strings.Join(p.Requested.Tools, ", "))
	}
	return &skilld.Error{Code: skilld.ECONFLICT,
		Message: fmt.Sprintf("approval_needed: %s asks for permissions no approval of skill %q covers (%s); an admin approves them (skilld skills approve %s --digest %s) and updates again",
			what, sk.Name, strings.Join(asks, "; "), sk.Slug, digest),
		Details: []skilld.Detail{{Field: "permissions", Message: "approval_needed " + digest}}}
}

// grants are what a run may give the skill at digest: what it asks for
// when that is approved, nothing otherwise.
func (s *Service) grants(ctx context.Context, sk *skilld.Skill, digest string, rules []skilld.InstallRule) (*Grants, error) {
	req, err := s.packageRequest(ctx, digest, nil)
	if err != nil || req.Empty() {
		return nil, err
	}
	p, err := s.decidePermissionsOf(ctx, sk, digest, req, rules)
	if err != nil {
		return nil, err
	}
	g := &Grants{Network: []string{}, Secrets: []string{}}
	if p.State == PermissionsApproved {
		g.Network, g.Secrets = req.Normalized().Network, req.Normalized().Secrets
	}
	return g, nil
}

// Grants are the network hosts and secrets a run gives one skill, decided
// at its start. Enforcing them (egress, secret injection) is the
// sandbox's.
type Grants struct {
	Network []string `json:"network"`
	Secrets []string `json:"secrets"`
}
