package service

import (
	"context"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/skilld/skilld"
)

// MaxAgentCardDescription bounds the description an agent card takes
// from the agent's instruction (its first paragraph), in characters.
const MaxAgentCardDescription = 1024

type AgentCardParams struct{ AgentRef }

// AgentCard is what an agent tells others about itself: who it is,
// where its tasks start, and the skills it discloses. Adapters render it
// in their protocol's terms (the HTTP API as an A2A agent card).
type AgentCard struct {
	AgentID string `json:"agent_id"`
	Name    string `json:"name"`
	// Description is the first paragraph of the agent's instruction, or
	// its name when it has none.
	Description string `json:"description"`
	// Version changes whenever the agent does: its last change, as an
	// RFC 3339 time in UTC.
	Version string `json:"version"`
	// TaskPath is the API path that starts a task of the agent.
	TaskPath string `json:"task_path"`
	// Skills are the attached skills the install policy does not
	// withhold, asked now, as a task starting now would see them.
	Skills []DisclosedSkill `json:"skills"`
}

// DisclosedSkill is one skill an agent discloses.
type DisclosedSkill struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	// Tags are keywords from the skill's name ("csv-inspector": csv,
	// inspector); skills carry no other keywords.
	Tags    []string `json:"tags"`
	Version int      `json:"version"`
	Digest  string   `json:"digest"`
}

// AgentCard describes an agent with the skills it discloses (viewers
// and up). The skills are resolved exactly as a task's snapshot resolves
// them (Resolve), so a skill a task would be refused is never advertised.
func (s *Service) AgentCard(ctx context.Context, a Actor, p AgentCardParams) (*AgentCard, error) {
	if err := a.can(skilld.RoleViewer); err != nil {
		return nil, err
	}
	ag, snap, err := s.resolveAgent(ctx, a, p.ID)
	if err != nil {
		return nil, err
	}
	prof := &AgentCard{
		AgentID: ag.ID, Name: ag.Name, Description: profileDescription(ag),
		Version:  ag.UpdatedAt.UTC().Format(time.RFC3339Nano),
		TaskPath: "/v1/workspaces/" + a.WorkspaceID + "/agents/" + ag.ID + "/tasks",
		Skills:   []DisclosedSkill{},
	}
	for _, sk := range snap.Skills {
		if sk.Withheld != "" {
			continue
		}
		prof.Skills = append(prof.Skills, DisclosedSkill{ID: sk.ID, Name: sk.Name, Description: sk.Description,
			Tags: nameTags(sk.Name), Version: sk.Version, Digest: sk.Digest})
	}
	return prof, nil
}

// profileDescription is the first paragraph of the agent's instruction,
// cut to MaxAgentCardDescription characters, or the agent's name.
func profileDescription(ag *skilld.Agent) string {
	text := strings.TrimSpace(ag.Config.Instruction)
	if para, _, ok := strings.Cut(text, "\n\n"); ok {
		text = para
	}
	text = strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(text) > MaxAgentCardDescription {
		r := []rune(text)
		text = strings.TrimSpace(string(r[:MaxAgentCardDescription-1])) + "…"
	}
	if text == "" {
		return ag.Name
	}
	return text
}

// nameTags splits a skill name into its words.
func nameTags(name string) []string {
	tags := []string{}
	for w := range strings.FieldsFuncSeq(strings.ToLower(name), func(r rune) bool { return r == '-' || r == '_' || r == ' ' }) {
		if !slices.Contains(tags, w) {
			tags = append(tags, w)
		}
	}
	return tags
}
