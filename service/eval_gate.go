package service

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

// EvalGateParams ask a catalog update to compare the candidate version's
// trigger evals with the pinned version's first.
type EvalGateParams struct {
	Agent string `json:"agent,omitempty" jsonschema:"compare with this agent's catalog and model; every agent following the skill's current version when omitted"`
	Runs  int    `json:"runs,omitempty" jsonschema:"times each query is asked (default 3)"`
	Model string `json:"model,omitempty" jsonschema:"a model reference to use instead of each agent's"`
}

// EvalScores are a version's trigger eval scores.
type EvalScores struct {
	Digest    string  `json:"digest"`
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
}

// EvalComparison compares the pinned and candidate versions of a skill as
// one agent and model see them. Regression is how far the candidate falls
// below the pinned version, in points of 100: the larger of the drops in
// precision and recall (0 when neither drops).
type EvalComparison struct {
	Agent      string     `json:"agent"`
	Model      string     `json:"model"`
	Pinned     EvalScores `json:"pinned"`
	Candidate  EvalScores `json:"candidate"`
	Regression float64    `json:"regression"`
}

// EvalRegression is why an install rule's eval_max_regression refused an
// update; the refusal (EFORBIDDEN) wraps it.
type EvalRegression struct {
	Skill string
	EvalComparison
	Rule Withheld
}

func (e *EvalRegression) Error() string {
	return fmt.Sprintf("%s refuses the update of %q: with agent %q and model %s its trigger evals fall %.1f points (precision %.2f → %.2f, recall %.2f → %.2f), more than the %g allowed",
		e.Rule.String(), e.Skill, e.Agent, e.Model, e.Regression, e.Pinned.Precision, e.Candidate.Precision, e.Pinned.Recall, e.Candidate.Recall, *e.Rule.Rule.EvalMaxRegression)
}

// gateUpdate runs the eval comparisons an update of sk to catalog version
// v asks for (p) or the install policy requires (an allow rule with
// eval_max_regression deciding about the item), and refuses the update
// when the rule's bound is passed. The pinned version's stored result is
// used when there is one for the agent, digest and model; otherwise it is
// run (and stored) too.
func (s *Service) gateUpdate(ctx context.Context, a Actor, sk *skilld.Skill, item *skilld.CatalogItem, v *skilld.CatalogItemVersion, p *EvalGateParams) ([]EvalComparison, error) {
	pol, err := s.db.PolicyGet(ctx, &store.PolicyGetParams{WorkspaceID: a.WorkspaceID})
	if err != nil {
		return nil, err
	}
	findings, err := neededFindings(ctx, pol.InstallRules, item.Registry, s.storedFindings(v.Digest))
	if err != nil {
		return nil, err
	}
	signed, err := neededSignature(ctx, pol.InstallRules, item.Registry, s.catalogSigned(item.ID, v.Number, v.Digest))
	if err != nil {
		return nil, err
	}
	var rule *Withheld
	if d := deciding(pol.InstallRules, item.Registry, item.Trust, findings, signed); d.index >= 0 && pol.InstallRules[d.index].EvalMaxRegression != nil {
		rule = &Withheld{Index: d.index, Rule: pol.InstallRules[d.index]}
	}
	if (p == nil && rule == nil) || v.Digest == sk.Digest {
		return nil, nil
	}
	p = cmp.Or(p, &EvalGateParams{})
	agents, err := s.followers(ctx, a, sk.ID, p.Agent)
	if err != nil {
		return nil, err
	}
	var out []EvalComparison
	for _, ag := range agents {
		c, err := s.compareEvals(ctx, a, ag, sk, v, p)
		if skilld.ErrorCode(err) == skilld.EINVALID && p.Agent == "" {
			continue // an agent with nothing to evaluate for the skill has nothing to compare
		}
		if err != nil {
			return nil, err
		}
		out = append(out, *c)
		if rule != nil && c.Regression > *rule.Rule.EvalMaxRegression {
			reg := &EvalRegression{Skill: sk.Name, EvalComparison: *c, Rule: *rule}
			return nil, &skilld.Error{Code: skilld.EFORBIDDEN, Message: reg.Error(), Err: reg,
				Details: []skilld.Detail{{Field: fmt.Sprintf("install_rules[%d].eval_max_regression", rule.Index), Message: reg.Error()}}}
		}
	}
	return out, nil
}

// followers are the agents an update of the skill reaches: the one named,
// or every agent attaching it without a version pin.
func (s *Service) followers(ctx context.Context, a Actor, skillID, named string) ([]*skilld.Agent, error) {
	if named != "" {
		ag, err := s.agent(ctx, a, named)
		if err != nil {
			return nil, err
		}
		if !slices.ContainsFunc(ag.Skills, func(as skilld.AgentSkill) bool { return as.SkillID == skillID }) {
			return nil, invalidField("eval.agent", "agent %q does not attach the skill", ag.Name)
		}
		return []*skilld.Agent{ag}, nil
	}
	var out []*skilld.Agent
	for pg := (store.Page{}); ; pg.Offset += store.MaxPageSize {
		pg.Limit = store.MaxPageSize
		list, _, err := s.db.AgentList(ctx, &store.AgentListParams{WorkspaceID: a.WorkspaceID, SkillID: skillID, Page: pg})
		if err != nil {
			return nil, err
		}
		for _, ag := range list {
			if slices.ContainsFunc(ag.Skills, func(as skilld.AgentSkill) bool { return as.SkillID == skillID && as.Version == 0 }) {
				out = append(out, ag)
			}
		}
		if len(list) < store.MaxPageSize {
			return out, nil
		}
	}
}

// compareEvals evaluates the skill as agent ag sees it now and with the
// candidate version in its place.
func (s *Service) compareEvals(ctx context.Context, a Actor, ag *skilld.Agent, sk *skilld.Skill, v *skilld.CatalogItemVersion, p *EvalGateParams) (*EvalComparison, error) {
	snap, err := s.Resolve(ctx, a.WorkspaceID, ag)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(snap.Skills, func(ss SnapshotSkill) bool { return ss.ID == sk.ID })
	pinned := snap.Skills[i]
	ref := cmp.Or(p.Model, snap.Model)
	c := &EvalComparison{Agent: ag.Name, Model: ref}
	stored, err := s.db.EvalResultList(ctx, &store.EvalResultListParams{WorkspaceID: a.WorkspaceID, AgentID: ag.ID, SkillID: sk.ID, SkillDigest: pinned.Digest, Model: ref, Limit: 1})
	if err != nil {
		return nil, err
	}
	if len(stored) == 0 {
		run, err := s.evalSnapshot(ctx, a, ag, snap, sk.ID, p.Runs, ref)
		if err != nil {
			return nil, err
		}
		stored = run.Results
	}
	c.Pinned = EvalScores{Digest: pinned.Digest, Precision: stored[0].Precision, Recall: stored[0].Recall}

	cand, err := s.snapshotSkill(ctx, sk.ID, sk.Name, v.Description, 0, v.Digest)
	if err != nil {
		return nil, err
	}
	cand.Withheld = pinned.Withheld
	snap.Skills = slices.Clone(snap.Skills)
	snap.Skills[i] = cand
	run, err := s.evalSnapshot(ctx, a, ag, snap, sk.ID, p.Runs, ref)
	if err != nil {
		return nil, err
	}
	c.Candidate = EvalScores{Digest: cand.Digest, Precision: run.Results[0].Precision, Recall: run.Results[0].Recall}
	c.Regression = 100 * max(0, c.Pinned.Precision-c.Candidate.Precision, c.Pinned.Recall-c.Candidate.Recall)
	return c, nil
}
