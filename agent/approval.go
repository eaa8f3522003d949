package agent

import (
	"context"
	"encoding/json"
)

// ApprovalRequest is a tool call waiting for someone's decision.
type ApprovalRequest struct {
	TaskID    string
	CallID    string
	Tool      string
	Arguments json.RawMessage
	Reason    string
}

// Approver decides calls that the policy says need approval. Approve
// blocks until the call is approved (true) or rejected (false), or ctx is
// done. The server's approver pauses the task (waiting_for_approval) until
// someone answers through the API.
type Approver interface {
	Approve(ctx context.Context, req ApprovalRequest) (bool, error)
}

// ApproveAll approves every call; for trusted local runs.
type ApproveAll struct{}

func (ApproveAll) Approve(context.Context, ApprovalRequest) (bool, error) { return true, nil }
