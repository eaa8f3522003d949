package store

import (
	"context"
	"time"

	"github.com/skilld/skilld/permissions"
)

// PermissionQueries persist admins' approvals of what skill packages ask
// for, one per skill and package digest.
type PermissionQueries interface {
	// PermissionApprovalPut records an approval of the request of the
	// skill's package Digest, replacing an earlier one of the same digest.
	// ENOTFOUND when the skill is not in the workspace.
	PermissionApprovalPut(ctx context.Context, p *PermissionApprovalPutParams) (*PermissionApproval, error)
	// PermissionApprovalList returns the approvals of a skill, newest
	// first.
	PermissionApprovalList(ctx context.Context, p *PermissionApprovalListParams) ([]PermissionApproval, error)
}

// PermissionApproval is an admin's approval of what one package of a
// skill asks for.
type PermissionApproval struct {
	WorkspaceID string              `json:"workspace_id"`
	SkillID     string              `json:"skill_id"`
	Digest      string              `json:"digest"`
	Approved    permissions.Request `json:"approved"`
	ApprovedBy  string              `json:"approved_by"`
	ApprovedAt  time.Time           `json:"approved_at"`
}

type PermissionApprovalPutParams struct {
	WorkspaceID string
	SkillID     string
	Digest      string
	Approved    permissions.Request
	ApprovedBy  string
}

type PermissionApprovalListParams struct {
	WorkspaceID string
	SkillID     string
}
