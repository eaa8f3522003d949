package mcpserver

import (
	"context"

	"github.com/skilld/skilld/agent/tool"
)

const toolListSkills = "list_skills"

// listSkillsParams is empty: the list is the whole disclosed catalog, small
// by design (names and descriptions only, as a run's catalog).
type listSkillsParams struct{}

// SkillSummary is one entry of list_skills: what a model needs to choose a
// skill, and nothing it would have to pay tokens for before choosing.
type SkillSummary struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Version     int    `json:"version"`
	// URI is the resource of the skill's SKILL.md.
	URI string `json:"uri"`
}

// SkillList is what list_skills returns.
type SkillList struct {
	Skills []SkillSummary `json:"skills"`
}

func (s *Server) listSkillsTool() *tool.Tool {
	t, err := tool.New(toolListSkills, "List the skills available in this workspace: each one's name and description. "+
		"Activate one with activate_skill before working on a task it covers.",
		func(ctx context.Context, _ listSkillsParams) (*SkillList, error) {
			skills, err := s.disclosed(ctx)
			if err != nil {
				return nil, err
			}
			out := &SkillList{Skills: make([]SkillSummary, len(skills))}
			for i, sk := range skills {
				out.Skills[i] = SkillSummary{Name: sk.Name, Description: sk.Description, Version: sk.Version, URI: fileURI(sk.Name, "SKILL.md")}
			}
			return out, nil
		})
	if err != nil {
		// The parameter type is fixed above; a schema error is a bug here.
		panic(err)
	}
	return t
}
