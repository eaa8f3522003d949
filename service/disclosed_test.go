package service_test

import (
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store/storetest"
)

// DisclosedRevision moves with whatever may change DisclosedSkills' answer
// (the workspace's skills, its install rules), stays while nothing does,
// and is "" when a rule requires signatures, whose keys it cannot follow.
func TestDisclosedRevision(t *testing.T) {
	forDrivers(t, func(t *testing.T, open storetest.Opener) {
		e := newEnv(t, open, service.Config{}, nil)
		ctx := t.Context()
		rev := func() string {
			t.Helper()
			return must[string](t)(e.svc.DisclosedRevision(ctx, e.viewer))
		}
		step := func(name string, change func()) {
			t.Helper()
			before, other := rev(), must[string](t)(e.svc.DisclosedRevision(ctx, e.other))
			change()
			if after := rev(); after == before || after == "" {
				t.Errorf("%s: the revision went from %q to %q", name, before, after)
			}
			if got := must[string](t)(e.svc.DisclosedRevision(ctx, e.other)); got != other {
				t.Errorf("%s: the other workspace's revision moved: %q → %q", name, other, got)
			}
		}
		if a, b := rev(), rev(); a != b || a == "" {
			t.Errorf("the revision moved without a change: %q, %q", a, b)
		}
		step("a skill created", func() {
			must[*service.SkillView](t)(e.svc.CreateSkill(ctx, e.member, service.CreateSkillParams{Files: map[string]string{"SKILL.md": skillMD("alpha", "First.")}}))
		})
		step("a rule added", func() {
			must[*skilld.Policy](t)(e.svc.PutPolicy(ctx, e.admin, service.PutPolicyParams{InstallRules: []skilld.InstallRule{{Effect: skilld.EffectDeny, Registry: "acme"}}}))
		})
		step("a finding rule added", func() {
			must[*skilld.Policy](t)(e.svc.PutPolicy(ctx, e.admin, service.PutPolicyParams{InstallRules: []skilld.InstallRule{{Effect: skilld.EffectDeny, MaxSeverity: skilld.SeverityHigh}}}))
		})
		must[*skilld.Policy](t)(e.svc.PutPolicy(ctx, e.admin, service.PutPolicyParams{InstallRules: []skilld.InstallRule{
			{Effect: skilld.EffectDeny, Registry: "acme", RequireSignature: &skilld.SignatureRequirement{Key: true}}}}))
		if got := rev(); got != "" {
			t.Errorf("with a signature rule the revision is %q, want none", got)
		}
	})
}
