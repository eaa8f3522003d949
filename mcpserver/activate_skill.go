package mcpserver

import (
	"context"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/tool"
	"github.com/skilld/skilld/pack"
)

const toolActivateSkill = agent.ActivateSkill

type activateSkillParams struct {
	SkillName string `json:"skill_name" jsonschema:"the name of the skill to activate, from list_skills"`
}

// activateSkillTool builds activate_skill. Its schema, its parameters'
// leaves the enum out: lists show the view's (withEnum,
// activateSkillSchema).
func (s *Server) activateSkillTool() *tool.Tool {
	t, err := tool.New(toolActivateSkill, "Load a skill's instructions (its SKILL.md) and the list of its files. "+
		"Call it before working on a task a skill covers; read the files it lists with read_skill_file.",
		func(ctx context.Context, p activateSkillParams) (string, error) { return s.activate(ctx, p.SkillName) })
	if err != nil {
		panic(err)
	}
	return t
}

// activateSkillSchema is activate_skill's input schema with skill_name an
// enum of exactly the disclosed skills, so a model cannot invent one (the
// call still checks the name against the policy now: the enum may be
// stale).
func activateSkillSchema(names []string) *jsonschema.Schema {
	name := &jsonschema.Schema{Type: "string", Description: "the name of the skill to activate, from list_skills"}
	if len(names) > 0 {
		// An empty enum would match nothing and some clients reject it;
		// with no skills the description says so instead.
		name.Enum = make([]any, len(names))
		for i, n := range names {
			name.Enum[i] = n
		}
	} else {
		name.Description = "no skills are available in this workspace yet"
	}
	return &jsonschema.Schema{
		Type:                 "object",
		Properties:           map[string]*jsonschema.Schema{"skill_name": name},
		Required:             []string{"skill_name"},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}
}

// activationKey names one rendering of activate_skill: a package
// published under a name and description, fitted to a session's budget.
// The server's tokenizer is the same for all its sessions.
type activationKey struct {
	pkg, name, description string
	window                 int
	share                  float64
}

// activate renders a skill's entry as a run does: the whole SKILL.md in
// <skill_content> with its file list when it fits one entry's share of the
// window, else a summary (its size, its opening, where to read the rest),
// else a too_large error. The client owns its conversation, so only the
// per-entry budget applies here, not a run's budget of all skills together.
func (s *Server) activate(ctx context.Context, name string) (string, error) {
	sk, err := s.skill(ctx, name)
	if err != nil {
		return "", err
	}
	// Whether the skill is disclosed was asked now; what it renders to
	// follows from its package and the budget.
	k := activationKey{sk.Digest, sk.Name, sk.Description, s.opts.Window, s.opts.EntryShare}
	if content, ok := s.opts.caches.activations.get(k); ok && sk.Digest != "" {
		return content, nil
	}
	list, err := s.files(ctx, sk)
	if err != nil {
		return "", err
	}
	if ok, err := s.svc.ModelInvocable(ctx, list); err != nil {
		return "", err
	} else if !ok {
		// As unknown to the model as a skill that is not there.
		return "", notServed(name)
	}
	files := make([]string, len(list.Files))
	var md []byte
	for i, f := range list.Files {
		files[i] = f.Path
		if pack.IsSkillMD(f.Path) {
			if md, _, err = s.readVersionFile(ctx, sk, list, f.Path, 0); err != nil {
				return "", err
			}
		}
	}
	limit := int(s.opts.EntryShare * float64(s.opts.Window))
	f := agent.EntryFormat{
		Header: fmt.Sprintf("The skill's files (read one with read_skill_file, or as the resource skill://%s/<path>):", sk.Name),
		More:   "resources/list shows them all",
		Where: func() (string, error) {
			return fmt.Sprintf("with read_skill_file {\"skill_name\": %q, \"path\": \"SKILL.md\"} or the resource %s", sk.Name, fileURI(sk.Name, "SKILL.md")), nil
		},
	}
	content, n, _, ok, err := agent.FitEntry(sk.Name, string(md), files, f, limit, s.opts.Tokenizer.Count)
	if err != nil {
		return "", err
	}
	if ok {
		k.pkg = list.Digest
		return s.opts.caches.activations.put(k, content), nil
	}
	return "", skilld.Errorf(skilld.ETOOLARGE, "skill %q was not activated: even its shortest summary needs %d tokens, more than the %d allowed for one skill (%.0f%% of a %d-token window)",
		sk.Name, n, limit, 100*s.opts.EntryShare, s.opts.Window)
}
