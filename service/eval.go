package service

import (
	"context"
	"fmt"
	"slices"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/evals"
	"github.com/skilld/skilld/store"
)

// EvalDecider is implemented by executors that open models in this
// process: it asks model ref (the snapshot's own when "") the first
// question of a run of snap, as agent.Decide does, and names the model it
// used.
type EvalDecider interface {
	EvalDecider(ctx context.Context, workspaceID string, snap *Snapshot, ref string) (evals.Decider, string, error)
}

type RunEvalsParams struct {
	Agent string `json:"agent" jsonschema:"the agent whose catalog and model are evaluated, by ID or name"`
	Skill string `json:"skill,omitempty" jsonschema:"evaluate only this attached skill (ID, slug or name); all with an eval set when omitted"`
	Runs  int    `json:"runs,omitempty" jsonschema:"times each query is asked (default 3, at most 20)"`
	Model string `json:"model,omitempty" jsonschema:"a model reference to use instead of the agent's"`
}

// EvalRun is a trigger eval run of an agent: each evaluated skill's
// scores, by skill name, and what the run cost.
type EvalRun struct {
	Agent  string                       `json:"agent"`
	Model  string                       `json:"model"`
	Runs   int                          `json:"runs"`
	Tokens int64                        `json:"tokens"`
	Skills map[string]*evals.SkillScore `json:"skills"`
	// Results are the stored results, one per skill.
	Results []*skilld.EvalResult `json:"results"`
}

// RunEvals runs the trigger evals of an agent's skills (members and up):
// the eval set of each attached skill's package (evals/evals.json) and
// the agent's own (config.evals), every query asked Runs times with the
// agent's real catalog, and stores each skill's result.
func (s *Service) RunEvals(ctx context.Context, a Actor, p RunEvalsParams) (*EvalRun, error) {
	if err := a.can(skilld.RoleMember); err != nil {
		return nil, err
	}
	ag, snap, err := s.resolveAgent(ctx, a, p.Agent)
	if err != nil {
		return nil, err
	}
	only := ""
	if p.Skill != "" {
		if only, err = s.attachedSkill(ctx, a, snap, p.Skill); err != nil {
			return nil, err
		}
	}
	return s.evalSnapshot(ctx, a, ag, snap, only, p.Runs, p.Model)
}

// attachedSkill finds the attached skill ref names (ID, slug or name).
func (s *Service) attachedSkill(ctx context.Context, a Actor, snap *Snapshot, ref string) (string, error) {
	for _, ss := range snap.Skills {
		if ss.Name == ref || ss.ID == ref {
			return ss.ID, nil
		}
	}
	if sk, err := s.skill(ctx, a, ref); err == nil {
		for _, ss := range snap.Skills {
			if ss.ID == sk.ID {
				return ss.ID, nil
			}
		}
	}
	return "", invalidField("skill", "skill %q is not attached to agent %q", ref, snap.AgentName)
}

// evalSnapshot runs the evals of snap's skills (only the skill with ID
// only, when set) and stores a result per skill.
func (s *Service) evalSnapshot(ctx context.Context, a Actor, ag *skilld.Agent, snap *Snapshot, only string, runs int, model string) (*EvalRun, error) {
	ed, ok := s.exec.(EvalDecider)
	if !ok {
		return nil, skilld.Errorf(skilld.EUNAVAILABLE, "this server does not open models itself (its tasks run on workers), so it cannot run evals")
	}
	cases, scored, err := s.evalCases(ctx, snap, ag.Config.Evals, only)
	if err != nil {
		return nil, err
	}
	snap.Starter = &Starter{Name: a.Name, Role: a.Role, InstanceAdmin: a.InstanceAdmin, TokenID: a.TokenID, TokenWorkspaceID: a.tokenWorkspace}
	decide, ref, err := ed.EvalDecider(ctx, a.WorkspaceID, snap, model)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(scored))
	for i, ss := range scored {
		names[i] = ss.Name
	}
	rep, err := evals.Run(ctx, names, cases, decide, evals.Options{Runs: runs})
	if err != nil {
		return nil, err
	}
	out := &EvalRun{Agent: ag.Name, Model: ref, Runs: rep.Runs, Tokens: rep.Tokens, Skills: map[string]*evals.SkillScore{}}
	for i, ss := range scored {
		sc := &rep.Skills[i]
		out.Skills[ss.Name] = sc
		res, err := s.db.EvalResultCreate(ctx, &store.EvalResultCreateParams{Result: skilld.EvalResult{
			WorkspaceID: a.WorkspaceID, AgentID: ag.ID, SkillID: ss.ID, Skill: ss.Name, SkillDigest: ss.Digest, Model: ref,
			Precision: sc.Precision, Recall: sc.Recall, Runs: rep.Runs, Queries: len(sc.Queries), Rates: sc.Queries, Tokens: sc.Tokens,
		}})
		if err != nil {
			return nil, err
		}
		out.Results = append(out.Results, res)
	}
	s.event(ctx, a, a.WorkspaceID, "evals.ran", ag.ID)
	return out, nil
}

// evalCases gathers the cases of an eval run: each disclosed skill's
// package set and the agent's own, and the skills to score (those with a
// set, or expected by a query of the agent's).
func (s *Service) evalCases(ctx context.Context, snap *Snapshot, own []skilld.EvalCase, only string) ([]evals.Case, []SnapshotSkill, error) {
	var cases []evals.Case
	var scored []SnapshotSkill
	for _, ss := range snap.Skills {
		if ss.Withheld != "" || ss.NoModelInvocation || (only != "" && ss.ID != only) {
			continue
		}
		set, err := s.packageEvals(ctx, ss)
		if err != nil {
			return nil, nil, err
		}
		if set != nil {
			cases = append(cases, evals.SkillCases(set)...)
		}
		expected := slices.ContainsFunc(own, func(c skilld.EvalCase) bool { return c.ExpectedSkill == ss.Name })
		if set != nil || expected {
			scored = append(scored, ss)
		}
	}
	for _, c := range evals.AgentCases(own) {
		if only == "" || c.Expect == "" || slices.ContainsFunc(scored, func(ss SnapshotSkill) bool { return ss.Name == c.Expect }) {
			cases = append(cases, c)
		}
	}
	if len(scored) == 0 {
		return nil, nil, skilld.Errorf(skilld.EINVALID, "agent %q has nothing to evaluate: no attached skill it can activate has an eval set (%s in its package) or a query of the agent's config.evals expecting it", snap.AgentName, evals.Path)
	}
	return cases, scored, nil
}

// packageEvals reads and parses a skill package's eval set, nil when it
// has none. A set for another skill is refused: its queries would be
// scored against the wrong skill.
func (s *Service) packageEvals(ctx context.Context, ss SnapshotSkill) (*evals.Set, error) {
	if !slices.Contains(ss.Files, evals.Path) {
		return nil, nil
	}
	files, err := s.db.PackageFileList(ctx, &store.PackageFileListParams{Digest: ss.Digest})
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(files, func(f skilld.PackageFile) bool { return f.Path == evals.Path })
	if i < 0 {
		return nil, nil
	}
	data, err := s.packages.ReadFile(ctx, files[i])
	if err != nil {
		return nil, err
	}
	set, err := evals.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("skill %q: %s: %w", ss.Name, evals.Path, err)
	}
	if set.SkillName != ss.Name {
		return nil, invalidField("skill_name", "skill %q: %s is the eval set of %q", ss.Name, evals.Path, set.SkillName)
	}
	return set, nil
}

type ListEvalsParams struct {
	Agent string `json:"agent,omitempty" query:"agent" jsonschema:"only this agent's results (ID or name)"`
	Skill string `json:"skill,omitempty" query:"skill" jsonschema:"only this skill's results (ID or slug)"`
	Limit int    `json:"limit,omitempty" query:"limit" jsonschema:"at most this many results, newest first (default and maximum 1000)"`
}

type EvalResultList struct {
	Items []*skilld.EvalResult `json:"items"`
}

// ListEvals lists stored eval results, newest first (viewers and up).
func (s *Service) ListEvals(ctx context.Context, a Actor, p ListEvalsParams) (*EvalResultList, error) {
	if err := a.can(skilld.RoleViewer); err != nil {
		return nil, err
	}
	lp := &store.EvalResultListParams{WorkspaceID: a.WorkspaceID, Limit: p.Limit}
	if p.Agent != "" {
		ag, err := s.agent(ctx, a, p.Agent)
		if err != nil {
			return nil, err
		}
		lp.AgentID = ag.ID
	}
	if p.Skill != "" {
		sk, err := s.skill(ctx, a, p.Skill)
		if err != nil {
			return nil, err
		}
		lp.SkillID = sk.ID
	}
	items, err := s.db.EvalResultList(ctx, lp)
	if err != nil {
		return nil, err
	}
	if items == nil {
		items = []*skilld.EvalResult{}
	}
	return &EvalResultList{Items: items}, nil
}
