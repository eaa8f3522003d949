package skillmd_test

import (
	"strings"
	"testing"

	"github.com/skilld/skilld/skillmd"
)

// TestClientFields: the clients' fields pass strict validation as
// warnings, are kept, and say who may invoke the skill; Codex's
// agents/openai.yaml can keep it from the model too.
func TestClientFields(t *testing.T) {
	md := "---\nname: deploy\ndescription: Deploys. Use when asked to deploy.\ndisable-model-invocation: true\nuser-invocable: false\nargument-hint: \"[env]\"\n---\nbody\n"
	r := skillmd.Check([]byte(md), skillmd.Options{})
	if !r.Valid() || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0].Message, "disable-model-invocation (Claude Code)") {
		t.Fatalf("errors %v warnings %v", r.Errors, r.Warnings)
	}
	if !r.Skill.DisableModelInvocation || !r.Skill.NoUserInvocation || r.Skill.Extra["argument-hint"] != "[env]" {
		t.Errorf("skill %+v", r.Skill)
	}
	bad := skillmd.Check([]byte(strings.Replace(md, "user-invocable: false", "user-invocable: maybe", 1)), skillmd.Options{})
	if !bad.Valid() || bad.Skill.NoUserInvocation || !strings.Contains(bad.Warnings[len(bad.Warnings)-1].Message, "must be true or false") {
		t.Errorf("a bad user-invocable: %v %v %+v", bad.Errors, bad.Warnings, bad.Skill)
	}
	plain := "---\nname: plain\ndescription: d\n---\n"
	for _, c := range []struct {
		md, yaml        string
		noModel, noUser bool
	}{
		{md, "", true, true},
		{plain, "", false, false},
		{plain, "interface:\n  display_name: Plain\npolicy:\n  allow_implicit_invocation: false\n", true, false},
		{plain, "policy:\n  allow_implicit_invocation: true\n", false, false},
		{plain, ": not yaml [", false, false},
	} {
		if noModel, noUser := skillmd.Invocation([]byte(c.md), []byte(c.yaml)); noModel != c.noModel || noUser != c.noUser {
			t.Errorf("Invocation(%q, %q) = %t, %t; want %t, %t", c.md, c.yaml, noModel, noUser, c.noModel, c.noUser)
		}
	}
}
