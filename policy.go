package skilld

import "time"

// Effects of an install rule.
const (
	EffectAllow = "allow"
	EffectDeny  = "deny"
)

// InstallRule allows or denies skills by where they come from and what
// the package scanner found in them. An empty Registry matches every
// registry; MinTrust, when set, makes the rule match only skills whose
// registry is trusted less than that level (a deny with min_trust
// "verified" refuses community skills). MaxSeverity and Rules make a deny
// match only packages with a finding at or above that severity, or of one
// of those rule IDs (an allow: only packages without), so "deny community
// skills with high findings" is one rule.
//
// RequireSignature makes a deny rule match skills whose package is not
// signed as it says (missing, invalid, or by someone else), and an allow
// rule match only skills whose package is.
//
// EvalMaxRegression, on an allow rule, gates catalog updates of the skills
// it matches: the candidate version's trigger evals (precision and
// recall, in points of 100) may not fall more than this below the pinned
// version's, for any agent that follows the skill's current version.
type InstallRule struct {
	Effect            string                `json:"effect"`
	Registry          string                `json:"registry,omitempty"`
	MinTrust          Trust                 `json:"min_trust,omitempty"`
	MaxSeverity       Severity              `json:"max_severity,omitempty"`
	Rules             []string              `json:"rules,omitempty"`
	EvalMaxRegression *float64              `json:"eval_max_regression,omitempty"`
	RequireSignature  *SignatureRequirement `json:"require_signature,omitempty"`
	// ApprovePermissions, on an allow rule, approves beforehand what the
	// skilld.yaml of the skills it matches (by Registry and MinTrust
	// alone; a rule with neither matches every skill, written in the
	// workspace too) asks for, when these hosts and secrets cover it.
	ApprovePermissions *PermissionGrant `json:"approve_permissions,omitempty"`
}

// PermissionGrant is what an install rule approves beforehand: host
// patterns as skilld.yaml writes them ("*.example.com" covers its
// subdomains, a host without a port every port) and secret names.
type PermissionGrant struct {
	Network []string `json:"network,omitempty"`
	Secrets []string `json:"secrets,omitempty"`
}

// SignatureRequirement is the signature an install rule asks of a
// package: with Key, one the registry's public key verifies; otherwise a
// Sigstore bundle, verified against the server's trusted root, whose
// certificate's OIDC issuer and subject match these regular expressions
// (empty: any).
type SignatureRequirement struct {
	Issuer  string `json:"issuer,omitempty"`
	Subject string `json:"subject,omitempty"`
	Key     bool   `json:"key,omitempty"`
}

// OnFindings reports whether the rule looks at scanner findings.
func (r InstallRule) OnFindings() bool { return r.MaxSeverity != "" || len(r.Rules) > 0 }

// ToolPolicy decides which tools an agent may call, by glob over tool
// names: Denied always wins; a non-empty Allowed admits only what it
// matches; RequireApproval pauses the task until someone approves the call.
type ToolPolicy struct {
	Denied          []string `json:"denied,omitempty"`
	Allowed         []string `json:"allowed,omitempty"`
	RequireApproval []string `json:"require_approval,omitempty"`
}

// Policy is a workspace's install rules and tool policy.
type Policy struct {
	WorkspaceID  string        `json:"workspace_id"`
	InstallRules []InstallRule `json:"install_rules"`
	Tools        ToolPolicy    `json:"tools"`
	UpdatedAt    time.Time     `json:"updated_at"`
}
