package service

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/policy"
	"github.com/skilld/skilld/store"
)

// Snapshot is a task's configuration, fixed when the task starts: the
// agent's settings and every attached skill resolved to the exact package
// digest of its pinned or current version, with the install policy asked
// again now. Nothing changed later (an edit, a catalog update, a deleted
// agent) alters what the run reads.
type Snapshot struct {
	AgentID     string                 `json:"agent_id"`
	AgentName   string                 `json:"agent_name"`
	Instruction string                 `json:"instruction"`
	Model       string                 `json:"model"`
	Context     skilld.ContextSettings `json:"context"`
	Sandbox     skilld.SandboxSettings `json:"sandbox"`
	Timeout     string                 `json:"timeout,omitempty"`
	Skills      []SnapshotSkill        `json:"skills"`
	// Tools are the tool policies that merge into the run's effective
	// policy, workspace first.
	Tools []policy.Level `json:"tools"`
	// Toolsets are the agent's extra toolsets (skilld.ToolsetSkills).
	Toolsets []string `json:"toolsets,omitempty"`
	// Starter is who started the task: the skills toolset acts as them.
	Starter *Starter `json:"starter,omitempty"`
}

// Starter is the actor that started a task, as its toolsets act.
type Starter struct {
	Name          string      `json:"name"`
	Role          skilld.Role `json:"role"`
	InstanceAdmin bool        `json:"instance_admin,omitempty"`
	TokenID       string      `json:"token_id,omitempty"`
	// TokenWorkspaceID is the token's own workspace (an instance admin's
	// may be another than the task's).
	TokenWorkspaceID string `json:"token_workspace_id,omitempty"`
}

// SnapshotSkill is one attached skill as the run sees it.
type SnapshotSkill struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Version     int      `json:"version"`
	Digest      string   `json:"digest"`
	Files       []string `json:"files"`
	// Withheld names the install rule that refuses the skill now.
	Withheld string `json:"withheld,omitempty"`
	// NoModelInvocation and NoUserInvocation say who may not activate
	// the skill: the model (it is kept out of the catalog) or the user
	// with "/name" (skillmd.Invocation).
	NoModelInvocation bool `json:"no_model_invocation,omitempty"`
	NoUserInvocation  bool `json:"no_user_invocation,omitempty"`
	// Headings are its SKILL.md's headings, which search_skills matches;
	// absent from snapshots taken before they were recorded (the search
	// then matches names and descriptions).
	Headings []string `json:"headings,omitempty"`
	// Rank orders the skills a catalog too small to name them all lists
	// first (rankSkills).
	Rank int `json:"rank,omitempty"`
	// Grants are the hosts and secrets the run gives the skill: what its
	// skilld.yaml asks for when an admin approved it, empty lists when
	// not; absent when it asks for nothing.
	Grants *Grants `json:"grants,omitempty"`
}

type StartTaskParams struct {
	AgentRef
	Input string `json:"input" jsonschema:"what the agent is asked to do"`
	// Tools is a task-level tool policy, merged after the workspace's and
	// the agent's (it can only restrict them further).
	Tools *skilld.ToolPolicy `json:"tools,omitempty" jsonschema:"task-level tool policy, applied on top of the workspace's and the agent's"`
}

// StartTask records a task for an agent with its snapshot (members and
// up). An executor runs it. Unlike RunTask it does not ask whether the
// agent's model can run here: its caller may run it with another
// (skilld run --agent --model).
func (s *Service) StartTask(ctx context.Context, a Actor, p StartTaskParams) (*skilld.Task, error) {
	rec, err := s.newTask(ctx, a, p, false)
	if err != nil {
		return nil, err
	}
	return s.recordTask(ctx, a, rec)
}

// newTask checks a start and makes the task's record, snapshot included;
// with checkModel, a task whose model this server's executor cannot run
// is refused. Nothing is recorded yet (recordTask).
func (s *Service) newTask(ctx context.Context, a Actor, p StartTaskParams, checkModel bool) (*store.TaskCreateParams, error) {
	if err := a.can(skilld.RoleMember); err != nil {
		return nil, err
	}
	if strings.TrimSpace(p.Input) == "" {
		return nil, invalidField("input", "input is required")
	}
	if p.Tools != nil {
		if err := policy.Validate("tools", *p.Tools); err != nil {
			return nil, err
		}
	}
	ag, snap, err := s.resolveAgent(ctx, a, p.ID)
	if err != nil {
		return nil, err
	}
	if err := checkSandbox(snap.Sandbox); err != nil {
		return nil, err
	}
	if checkModel {
		if err := s.checkModel(snap.AgentName, snap.Model, snap.Context.Window); err != nil {
			return nil, err
		}
	}
	if p.Tools != nil {
		snap.Tools = append(snap.Tools, policy.Level{Name: "task", Policy: *p.Tools})
	}
	snap.Starter = &Starter{Name: a.Name, Role: a.Role, InstanceAdmin: a.InstanceAdmin, TokenID: a.TokenID, TokenWorkspaceID: a.tokenWorkspace}
	config, err := json.Marshal(snap)
	if err != nil {
		return nil, err
	}
	// The snapshot's packages are pinned until the task ends: deleting a
	// skill meanwhile must not take them from under it.
	var pins []string
	for _, sk := range snap.Skills {
		if sk.Withheld == "" {
			pins = append(pins, sk.Digest)
		}
	}
	return &store.TaskCreateParams{WorkspaceID: a.WorkspaceID, AgentID: ag.ID, Input: p.Input, Config: config, CreatedBy: a.Name, Packages: pins}, nil
}

// recordTask records a task newTask made, queued.
func (s *Service) recordTask(ctx context.Context, a Actor, rec *store.TaskCreateParams) (*skilld.Task, error) {
	t, err := s.db.TaskCreate(ctx, rec)
	if err != nil {
		return nil, err
	}
	s.event(ctx, a, a.WorkspaceID, "task.created", t.ID)
	return t, nil
}

// Resolve builds the snapshot of an agent now.
func (s *Service) Resolve(ctx context.Context, workspaceID string, ag *skilld.Agent) (*Snapshot, error) {
	pol, err := s.db.PolicyGet(ctx, &store.PolicyGetParams{WorkspaceID: workspaceID})
	if err != nil {
		return nil, err
	}
	snap := &Snapshot{
		AgentID: ag.ID, AgentName: ag.Name, Instruction: ag.Config.Instruction, Model: ag.Config.Model, Context: ag.Config.Context, Sandbox: ag.Config.Sandbox,
		Timeout: ag.Config.Timeout, Skills: []SnapshotSkill{}, Toolsets: ag.Config.Toolsets,
		Tools: []policy.Level{{Name: "workspace", Policy: pol.Tools}, {Name: "agent", Policy: ag.Config.Tools}},
	}
	for _, att := range ag.Skills {
		sk, err := s.db.SkillGet(ctx, &store.SkillGetParams{WorkspaceID: workspaceID, ID: att.SkillID})
		if err != nil {
			return nil, err
		}
		digest, version, err := s.versionDigest(ctx, sk, att.Version)
		if err != nil {
			return nil, fmt.Errorf("agent %q pins skill %q to version %d: %w", ag.Name, sk.Name, att.Version, err)
		}
		ss, err := s.snapshotSkill(ctx, sk.ID, sk.Name, sk.Description, version, digest)
		if err != nil {
			return nil, err
		}
		w, err := s.decide(ctx, pol.InstallRules, sk.Registry, sk.Trust, s.storedFindings(digest), s.catalogSigned(sk.CatalogItemID, sk.CatalogVersion, digest))
		if err != nil {
			return nil, err
		}
		if w != nil {
			ss.Withheld = fmt.Sprintf("%s (skill from registry %q, trust %s)", w, sk.Registry, sk.Trust)
		}
		if ss.Grants, err = s.grants(ctx, sk, digest, pol.InstallRules); err != nil {
			return nil, err
		}
		if att.Version > 0 {
			ss.Rank = pinnedRank
		}
		snap.Skills = append(snap.Skills, ss)
	}
	if err := s.rankSkills(ctx, workspaceID, ag.ID, snap.Skills); err != nil {
		return nil, err
	}
	return snap, nil
}

// Ranking of an agent's skills, for a catalog that cannot name them all:
// pinned skills first, then those the agent's tasks of the last
// rankPeriod activated most. Agents with at most rankFrom skills are not
// ranked: every common window names that many.
const (
	pinnedRank = 1 << 30
	rankFrom   = 50
	rankPeriod = 30 * 24 * time.Hour
)

// rankSkills adds to each skill's rank its activations in the agent's
// recent tasks (skill analytics).
func (s *Service) rankSkills(ctx context.Context, workspaceID, agentID string, skills []SnapshotSkill) error {
	if len(skills) <= rankFrom {
		return nil
	}
	groups, err := s.db.SkillUsageSummary(ctx, &store.SkillUsageSummaryParams{WorkspaceID: workspaceID, AgentID: agentID,
		From: s.cfg.Now().Add(-rankPeriod)})
	if err != nil {
		return err
	}
	activations := map[string]int{}
	for _, g := range groups {
		activations[g.SkillID] += g.Activations
	}
	for i := range skills {
		skills[i].Rank += activations[skills[i].ID]
	}
	return nil
}

// snapshotSkill is a skill as a run sees it at one package: its files and
// who may invoke it (the install policy is the caller's to ask).
func (s *Service) snapshotSkill(ctx context.Context, id, name, description string, version int, digest string) (SnapshotSkill, error) {
	files, err := s.db.PackageFileList(ctx, &store.PackageFileListParams{Digest: digest})
	if err != nil {
		return SnapshotSkill{}, err
	}
	ss := SnapshotSkill{ID: id, Name: name, Description: description, Version: version, Digest: digest, Files: make([]string, len(files))}
	for i, f := range files {
		ss.Files[i] = f.Path
	}
	facts, err := s.skillFacts(ctx, digest, files)
	if err != nil {
		return SnapshotSkill{}, err
	}
	ss.NoModelInvocation, ss.NoUserInvocation, ss.Headings = facts.noModel, facts.noUser, facts.headings
	return ss, nil
}

// resolveAgent finds an agent of the actor's workspace and resolves it as
// a task starting now would see it.
func (s *Service) resolveAgent(ctx context.Context, a Actor, ref string) (*skilld.Agent, *Snapshot, error) {
	ag, err := s.agent(ctx, a, ref)
	if err != nil {
		return nil, nil, err
	}
	snap, err := s.Resolve(ctx, a.WorkspaceID, ag)
	if err != nil {
		return nil, nil, err
	}
	return ag, snap, nil
}

// TaskSnapshot decodes a task's snapshot.
func TaskSnapshot(t *skilld.Task) (*Snapshot, error) {
	var snap Snapshot
	if err := json.Unmarshal(t.Config, &snap); err != nil {
		return nil, fmt.Errorf("task %s has an unreadable snapshot: %w", t.ID, err)
	}
	return &snap, nil
}

type TaskRef struct {
	ID string `json:"id" path:"id" jsonschema:"the task's ID"`
}

type GetTaskParams struct{ TaskRef }

// GetTask returns a task of the workspace (viewers and up).
func (s *Service) GetTask(ctx context.Context, a Actor, p GetTaskParams) (*skilld.Task, error) {
	if err := a.can(skilld.RoleViewer); err != nil {
		return nil, err
	}
	t, err := s.db.TaskGet(ctx, &store.TaskGetParams{WorkspaceID: a.WorkspaceID, ID: p.ID})
	if err == nil {
		s.position(t)
	}
	return t, err
}

// position fills in a queued task's place in line.
func (s *Service) position(t *skilld.Task) {
	if q, ok := s.exec.(Queue); ok && t.Status == skilld.TaskQueued {
		t.QueuePosition = q.Position(t.ID)
	}
}

type ListTasksParams struct {
	Agent     string            `json:"agent,omitempty" query:"agent" jsonschema:"only tasks of this agent (ID or name)"`
	Status    skilld.TaskStatus `json:"status,omitempty" query:"status"`
	Page      int               `json:"page,omitempty" query:"page"`
	PageSize  int               `json:"page_size,omitempty" query:"page_size"`
	PageToken string            `json:"page_token,omitempty" query:"page_token" jsonschema:"the next_page_token of the previous page (instead of page)"`
}

type TaskPage struct {
	Items         []*skilld.Task `json:"items"`
	Total         int            `json:"total"`
	Page          int            `json:"page"`
	PageSize      int            `json:"page_size"`
	NextPageToken string         `json:"next_page_token,omitempty"`
}

// ListTasks lists the workspace's tasks, newest first (viewers and up).
func (s *Service) ListTasks(ctx context.Context, a Actor, p ListTasksParams) (*TaskPage, error) {
	if err := a.can(skilld.RoleViewer); err != nil {
		return nil, err
	}
	query := filterDigest(a.WorkspaceID, p.Agent, p.Status)
	pg, norm, err := keyed(Page{Page: p.Page, PageSize: p.PageSize}, p.PageToken, "tasks", query)
	if err != nil {
		return nil, err
	}
	params := &store.TaskListParams{WorkspaceID: a.WorkspaceID, Status: p.Status, Page: pg}
	if p.Agent != "" {
		ag, err := s.agent(ctx, a, p.Agent)
		if err != nil {
			return nil, err
		}
		params.AgentID = ag.ID
	}
	items, total, err := s.db.TaskList(ctx, params)
	if items == nil {
		items = []*skilld.Task{}
	}
	for _, t := range items {
		t.Config = nil // lists stay small; GetTask has the snapshot
		s.position(t)
	}
	out := &TaskPage{Items: items, Total: total, Page: norm.Page, PageSize: norm.PageSize}
	if len(items) > 0 {
		out.NextPageToken = nextToken(pg, len(items), total, "tasks", query, items[len(items)-1].ID)
	}
	return out, err
}

type TaskEventsParams struct {
	TaskRef
	After int64 `json:"after,omitempty" query:"after" jsonschema:"only entries after this sequence number"`
	Limit int   `json:"limit,omitempty" query:"limit" jsonschema:"at most this many entries (default and maximum 1000)"`
	// Format chooses how HTTP delivers the log: "json" for one answer,
	// otherwise a live Server-Sent Events stream. The service ignores it.
	Format string `json:"format,omitempty" query:"format" jsonschema:"json for one JSON answer; by default a live Server-Sent Events stream"`
}

// TaskEvents returns a task's log entries after a sequence number
// (viewers and up).
func (s *Service) TaskEvents(ctx context.Context, a Actor, p TaskEventsParams) ([]*skilld.TaskLogEntry, error) {
	_, entries, err := s.TaskLog(ctx, a, p)
	return entries, err
}

// TaskLog is TaskEvents with the task, read before the entries: when the
// task has finished its log is complete, so a follower that got fewer
// entries than the limit has seen everything.
func (s *Service) TaskLog(ctx context.Context, a Actor, p TaskEventsParams) (*skilld.Task, []*skilld.TaskLogEntry, error) {
	t, err := s.GetTask(ctx, a, GetTaskParams{p.TaskRef})
	if err != nil {
		return nil, nil, err
	}
	entries, err := s.db.TaskLogList(ctx, &store.TaskLogListParams{TaskID: p.ID, AfterSeq: p.After, Limit: p.Limit})
	return t, entries, err
}

// ReleaseTask unpins the packages of a task that has ended, and deletes
// those nothing else refers to any more (a skill deleted while the task
// ran). Releasing twice is harmless.
func (s *Service) ReleaseTask(ctx context.Context, taskID string) error {
	digests, err := s.db.TaskPackagesRelease(ctx, &store.TaskPackagesReleaseParams{TaskID: taskID})
	if err != nil {
		return err
	}
	return s.packages.Release(ctx, digests)
}
