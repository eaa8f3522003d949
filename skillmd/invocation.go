package skillmd

import (
	"github.com/goccy/go-yaml"
)

// CodexMetadataFile is where Codex keeps a skill's client settings, beside
// SKILL.md.
const CodexMetadataFile = "agents/openai.yaml"

// Invocation says who may activate a skill, from its SKILL.md (the
// clients' disable-model-invocation and user-invocable) and, when present,
// Codex's agents/openai.yaml (policy.allow_implicit_invocation: false is
// Codex's way to keep a skill out of the model's choice). A file that
// does not parse grants both, as a client ignoring it would.
func Invocation(skillMD, openaiYAML []byte) (noModel, noUser bool) {
	if r := Check(skillMD, Options{Lenient: true, LongFields: true}); r.Skill != nil {
		noModel, noUser = r.Skill.DisableModelInvocation, r.Skill.NoUserInvocation
	}
	if len(openaiYAML) > 0 && len(openaiYAML) <= MaxFrontmatterSize {
		var meta struct {
			Policy struct {
				AllowImplicitInvocation *bool `yaml:"allow_implicit_invocation"`
			} `yaml:"policy"`
		}
		if yaml.Unmarshal(openaiYAML, &meta) == nil && meta.Policy.AllowImplicitInvocation != nil && !*meta.Policy.AllowImplicitInvocation {
			noModel = true
		}
	}
	return noModel, noUser
}
