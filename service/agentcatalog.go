package service

import (
	"context"
	"slices"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
)

type AgentCatalogParams struct{ AgentRef }

// AgentCatalog says how an agent's catalog fits its budget: at the
// agent's own context window and at the common ones, which skills keep
// their whole entry and which are shortened or reduced to their name. A
// catalog that does not fit is shortened silently from the model's point
// of view, so a skill author needs this to know why a skill is not picked.
type AgentCatalog struct {
	AgentID string `json:"agent_id"`
	// Listed counts the skills the catalog lists; Withheld are those the
	// install policy keeps out now, and Hidden those whose SKILL.md keeps
	// them from the model (only "/name" activates them).
	Listed   int             `json:"listed"`
	Withheld []WithheldSkill `json:"withheld"`
	Hidden   []string        `json:"hidden"`
	// Share is the share of the window the catalog may take.
	Share float64 `json:"share"`
	// Encoding is the tokenizer the catalog is counted with.
	Encoding string          `json:"encoding"`
	Windows  []CatalogWindow `json:"windows"`
}

// WithheldSkill is an attached skill the install policy withholds.
type WithheldSkill struct {
	Skill string `json:"skill"`
	Rule  string `json:"rule"`
}

// CatalogWindow is the catalog as a run with one context window renders
// it.
type CatalogWindow struct {
	Window int `json:"window"`
	// Agent marks the agent's own window (its context setting, or its
	// model's known window).
	Agent  bool `json:"agent,omitempty"`
	Budget int  `json:"budget"`
	Tokens int  `json:"tokens"`
	// Fits is false when even names alone exceed the budget.
	Fits bool `json:"fits"`
	// Level is the detail kept, as the catalog.trimmed event names it.
	Level string `json:"level"`
	// Shortened names the skills whose entry loses something at Level
	// (at most 200; ShortenedMore counts the rest).
	Shortened     []string `json:"shortened"`
	ShortenedMore int      `json:"shortened_more,omitempty"`
	// Unlisted counts the skills not even named (level "some names"):
	// the model finds them with search_skills.
	Unlisted int `json:"unlisted,omitempty"`
}

// AgentCatalog renders an agent's catalog, as a task starting now would
// (Resolve), at its window and the common ones (viewers and up).
func (s *Service) AgentCatalog(ctx context.Context, a Actor, p AgentCatalogParams) (*AgentCatalog, error) {
	if err := a.can(skilld.RoleViewer); err != nil {
		return nil, err
	}
	ag, snap, err := s.resolveAgent(ctx, a, p.ID)
	if err != nil {
		return nil, err
	}
	counter, err := s.tokens.ForModel(ag.Config.Model, "")
	if err != nil {
		return nil, err
	}
	out := &AgentCatalog{AgentID: ag.ID, Withheld: []WithheldSkill{}, Hidden: []string{}, Share: agent.DefaultCatalogShare,
		Encoding: counter.Encoding(), Windows: []CatalogWindow{}}
	var listed []agent.Skill
	for _, sk := range snap.Skills {
		switch {
		case sk.Withheld != "":
			out.Withheld = append(out.Withheld, WithheldSkill{Skill: sk.Name, Rule: sk.Withheld})
		case sk.NoModelInvocation:
			out.Hidden = append(out.Hidden, sk.Name)
		default:
			listed = append(listed, agent.Skill{ID: sk.ID, Name: sk.Name, Description: sk.Description, Files: sk.Files})
		}
	}
	out.Listed = len(listed)
	if len(listed) == 0 {
		return out, nil
	}
	own := ag.Config.Context.Window
	if own == 0 {
		own, _ = model.ContextWindow(ag.Config.Model)
	}
	windows := agent.CatalogWindows()
	if own > 0 && !slices.Contains(windows, own) {
		windows = append(windows, own)
		slices.Sort(windows)
	}
	for _, w := range windows {
		fit := agent.FitCatalog(listed, w, counter.Count)
		cw := CatalogWindow{Window: w, Agent: w == own, Budget: fit.Budget, Tokens: fit.Tokens, Fits: fit.Tokens <= fit.Budget,
			Level: fit.Level, Shortened: fit.Shortened, ShortenedMore: fit.ShortenedMore, Unlisted: fit.Unlisted}
		out.Windows = append(out.Windows, cw)
	}
	return out, nil
}
