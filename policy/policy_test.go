package policy_test

import (
	"errors"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/policy"
)

func TestDecide(t *testing.T) {
	ws := policy.Level{Name: "workspace", Policy: skilld.ToolPolicy{Denied: []string{"shell"}, RequireApproval: []string{"write_*"}}}
	agent := policy.Level{Name: "agent", Policy: skilld.ToolPolicy{Allowed: []string{"read_*", "write_file", "activate_skill", "shell"}}}
	task := policy.Level{Name: "task", Policy: skilld.ToolPolicy{Denied: []string{"write_file"}}}
	for _, tt := range []struct {
		levels []policy.Level
		tool   string
		want   policy.Decision
		reason string
	}{
		{nil, "anything", policy.Allow, "allowed"},
		{[]policy.Level{ws}, "shell", policy.Deny, "denied by the workspace policy (shell)"},
		{[]policy.Level{ws}, "write_file", policy.RequireApproval, "needs approval under the workspace policy (write_*)"},
		{[]policy.Level{ws, agent}, "shell", policy.Deny, "denied by the workspace policy (shell)"},
		{[]policy.Level{ws, agent}, "read_file", policy.Allow, "allowed"},
		{[]policy.Level{ws, agent}, "skills_list", policy.Deny, "not in the agent policy's allowed tools"},
		{[]policy.Level{ws, agent}, "write_file", policy.RequireApproval, "needs approval under the workspace policy (write_*)"},
		{[]policy.Level{ws, agent, task}, "write_file", policy.Deny, "denied by the task policy (write_file)"},
		{[]policy.Level{{Name: "x", Policy: skilld.ToolPolicy{Denied: []string{"[bad"}}}}, "[bad", policy.Allow, "allowed"},
	} {
		v := policy.Merge(tt.levels...).Decide(tt.tool)
		if v.Decision != tt.want || v.Reason() != tt.reason {
			t.Errorf("%s under %d levels: %s (%s), want %s (%s)", tt.tool, len(tt.levels), v.Decision, v.Reason(), tt.want, tt.reason)
		}
	}
}

func TestValidate(t *testing.T) {
	if err := policy.Validate("tools", skilld.ToolPolicy{Denied: []string{"shell", "write_*", "read_[ab]"}}); err != nil {
		t.Errorf("valid globs refused: %v", err)
	}
	for field, p := range map[string]skilld.ToolPolicy{
		"tools.denied[1]":           {Denied: []string{"ok", "[bad"}},
		"tools.allowed[0]":          {Allowed: []string{""}},
		"tools.require_approval[0]": {RequireApproval: []string{"a\\"}},
	} {
		err := policy.Validate("tools", p)
		var se *skilld.Error
		if !errors.As(err, &se) || se.Code != skilld.EINVALID || len(se.Details) != 1 || se.Details[0].Field != field {
			t.Errorf("%+v: %v; want EINVALID on %s", p, err, field)
		}
	}
}
