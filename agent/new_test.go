package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/tool"
)

// TestNewRefusesClashes: names the model addresses must be unique, so New
// refuses two skills of one name and tools that shadow others.
func TestNewRefusesClashes(t *testing.T) {
	custom := func(name string) *tool.Tool {
		tl, err := tool.New(name, "A custom tool.", func(context.Context, struct{}) (string, error) { return "ok", nil })
		if err != nil {
			t.Fatal(err)
		}
		return tl
	}
	pkgs := &agent.MemoryPackages{}
	twin := bigSkill(t, pkgs, "twin", 10)
	base := agent.Config{Model: script(t), Window: 10000, Tokenizer: runeCounter{}, Packages: pkgs}
	for _, tt := range []struct {
		name   string
		skills []agent.Skill
		tools  []*tool.Tool
		want   string // "" when accepted
	}{
		{"custom tool", nil, []*tool.Tool{custom("lookup")}, ""},
		{"two skills of one name", []agent.Skill{twin, twin}, nil, `two attached skills are named "twin"`},
		{"a built-in's name", nil, []*tool.Tool{custom(agent.ToolShell)}, `tool name "shell" is taken`},
		{"activate_skill's name", nil, []*tool.Tool{custom(agent.ActivateSkill)}, `tool name "activate_skill" is taken`},
		{"two tools of one name", nil, []*tool.Tool{custom("lookup"), custom("lookup")}, `tool name "lookup" is taken`},
	} {
		cfg := base
		cfg.Skills, cfg.Tools = tt.skills, tt.tools
		_, err := agent.New(cfg)
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			continue
		}
		if skilld.ErrorCode(err) != skilld.EINVALID || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an invalid error with %q", tt.name, err, tt.want)
		}
	}
}

// TestNewChecksContextLikeTheService: a run's context settings are refused
// by the rules an agent is saved with, with the same words.
func TestNewChecksContextLikeTheService(t *testing.T) {
	for _, cs := range []skilld.ContextSettings{
		{Placement: "sideways"}, {MaxLoaded: 2}, {MaxMessages: 1}, {Placement: "context", EntryShare: 1.5}, {SkillsShare: -1},
	} {
		want := cs.Check()
		_, err := agent.New(agent.Config{Model: script(t), Window: 10000, Tokenizer: runeCounter{}, Placement: cs.Placement,
			MaxLoaded: cs.MaxLoaded, MaxMessages: cs.MaxMessages, EntryShare: cs.EntryShare, SkillsShare: cs.SkillsShare})
		if want == nil || skilld.ErrorMessage(err) != skilld.ErrorMessage(want) || skilld.ErrorCode(err) != skilld.EINVALID {
			t.Errorf("%+v: New says %v, the saved agent's rule %v", cs, err, want)
		}
	}
}
