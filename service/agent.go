package service

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/evals"
	"github.com/skilld/skilld/policy"
	"github.com/skilld/skilld/sandbox"
	"github.com/skilld/skilld/sandbox/egress"
	"github.com/skilld/skilld/store"
)

// AgentSkillRef attaches a skill to an agent: a workspace skill (by ID or
// slug) or a catalog item ("registry/name"), which is installed first.
type AgentSkillRef struct {
	Skill   string `json:"skill,omitempty" jsonschema:"a workspace skill's ID or slug"`
	Item    string `json:"item,omitempty" jsonschema:"a catalog item as registry/name, installed into the workspace first"`
	Version int    `json:"version,omitempty" jsonschema:"pin to this skill version; follow the current version when omitted"`
}

type AgentParams struct {
	Name   string             `json:"name" jsonschema:"unique name of the agent in the workspace"`
	Config skilld.AgentConfig `json:"config" jsonschema:"instruction, model, tool policy and context settings"`
	Skills []AgentSkillRef    `json:"skills,omitempty" jsonschema:"skills attached to the agent"`
}

// MaxTaskTimeout is the longest an agent's task may be allowed to run.
const MaxTaskTimeout = 24 * time.Hour

// CreateAgent stores an agent configuration (members and up).
func (s *Service) CreateAgent(ctx context.Context, a Actor, p AgentParams) (*skilld.Agent, error) {
	if err := a.can(skilld.RoleMember); err != nil {
		return nil, err
	}
	name, err := DisplayName("name", p.Name)
	if err != nil {
		return nil, err
	}
	if err := checkAgentConfig(p.Config); err != nil {
		return nil, err
	}
	skills, err := s.resolveAgentSkills(ctx, a, p.Skills)
	if err != nil {
		return nil, err
	}
	ag, err := s.db.AgentCreate(ctx, &store.AgentCreateParams{WorkspaceID: a.WorkspaceID, Name: name, Config: p.Config, Skills: skills, CreatedBy: a.Name})
	if err != nil {
		return nil, err
	}
	s.event(ctx, a, a.WorkspaceID, "agent.created", ag.ID)
	ag.Warnings = s.agentWarnings(ag)
	return ag, nil
}

// agentWarnings are what a saved agent's config asks that this server
// will not give its tasks.
func (s *Service) agentWarnings(ag *skilld.Agent) []skilld.Detail {
	return append(s.modelWarnings(ag), s.timeoutWarnings(ag)...)
}

// timeoutWarnings warn of a config.timeout longer than the executor lets
// any task run: the agent is saved, and its tasks stop at the executor's
// limit.
func (s *Service) timeoutWarnings(ag *skilld.Agent) []skilld.Detail {
	tl, ok := s.exec.(TimeoutLimiter)
	if !ok || ag.Config.Timeout == "" {
		return nil
	}
	d, err := time.ParseDuration(ag.Config.Timeout)
	if limit := tl.TaskTimeout(); err == nil && limit > 0 && d > limit {
		return []skilld.Detail{{Field: "config.timeout", Message: fmt.Sprintf("timeout %s is longer than this server lets a task run (--task-timeout %s): its tasks stop after %s", ag.Config.Timeout, limit, limit)}}
	}
	return nil
}

// modelWarnings are the warnings of an agent whose model its tasks could
// not run with here: the message its tasks' start would be refused with.
// An agent is still saved with them (the server may be configured for it
// later, or the agent be meant for other servers).
func (s *Service) modelWarnings(ag *skilld.Agent) []skilld.Detail {
	err := s.checkModel(ag.Name, ag.Config.Model, ag.Config.Context.Window)
	if err == nil {
		return nil
	}
	var se *skilld.Error
	if errors.As(err, &se) && len(se.Details) > 0 {
		return se.Details
	}
	return []skilld.Detail{{Field: "config.model", Message: skilld.ErrorMessage(err)}}
}

// checkModel asks the executor, when it opens models in this process,
// whether a task with this model and window could run here. The refusal
// is EINVALID whatever the executor's code: it is the agent's config that
// this server cannot run.
func (s *Service) checkModel(agentName, ref string, window int) error {
	mc, ok := s.exec.(ModelChecker)
	if !ok {
		return nil // tasks run elsewhere (Temporal workers), with their own models
	}
	err := mc.CheckModel(agentName, ref, window)
	if err == nil || skilld.ErrorCode(err) == skilld.EINVALID {
		return err
	}
	return &skilld.Error{Code: skilld.EINVALID, Message: skilld.ErrorMessage(err), Details: []skilld.Detail{{Field: "config.model", Message: skilld.ErrorMessage(err)}}, Err: err}
}

// resolveAgentSkills turns references into attachments, installing catalog
// items (which asks the install policy).
func (s *Service) resolveAgentSkills(ctx context.Context, a Actor, refs []AgentSkillRef) ([]skilld.AgentSkill, error) {
	out := make([]skilld.AgentSkill, 0, len(refs))
	for i, r := range refs {
		var id string
		switch {
		case r.Skill != "" && r.Item != "":
			return nil, invalidField("skills", "skills[%d]: give either skill or item, not both", i)
		case r.Item != "":
			sk, err := s.InstallSkill(ctx, a, InstallSkillParams{Item: r.Item})
			if err != nil {
				return nil, err
			}
			id = sk.ID
		case r.Skill != "":
			sk, err := s.skill(ctx, a, r.Skill)
			if err != nil {
				return nil, err
			}
			id = sk.ID
		default:
			return nil, invalidField("skills", "skills[%d]: give a skill or an item", i)
		}
		if r.Version < 0 {
			return nil, invalidField("skills", "skills[%d]: version must be positive", i)
		}
		out = append(out, skilld.AgentSkill{SkillID: id, Version: r.Version})
	}
	return out, nil
}

func checkAgentConfig(c skilld.AgentConfig) error {
	if err := policy.Validate("config.tools", c.Tools); err != nil {
		return err
	}
	if err := checkText("config.instruction", c.Instruction); err != nil {
		return err
	}
	if err := evals.CheckAgent(c.Evals); err != nil {
		return err
	}
	if c.Timeout != "" {
		if d, err := time.ParseDuration(c.Timeout); err != nil || d < time.Second || d > MaxTaskTimeout {
			return invalidField("config.timeout", "timeout must be a duration from 1s to %s, such as 30m, not %q", MaxTaskTimeout, c.Timeout)
		}
	}
	if err := c.Context.Check(); err != nil {
		return err
	}
	for _, ts := range c.Toolsets {
		if ts != skilld.ToolsetSkills {
			return invalidField("config.toolsets", "unknown toolset %q; the toolsets are: %s", ts, skilld.ToolsetSkills)
		}
	}
	return checkSandbox(c.Sandbox)
}

// checkSandbox checks an agent's sandbox settings: when it is saved, and
// again when a task starts (an agent saved before a rule existed).
func checkSandbox(sb skilld.SandboxSettings) error {
	if len(sb.Env) > MaxSandboxEnv {
		return invalidField("config.sandbox.env", "at most %d variables, not %d", MaxSandboxEnv, len(sb.Env))
	}
	names := slices.Sorted(maps.Keys(sb.Env))
	for _, name := range names {
		v := sb.Env[name]
		if err := sandbox.CheckEnv([]string{name + "=" + v}); err != nil {
			return invalidField("config.sandbox.env", "%s", skilld.ErrorMessage(err))
		}
		if len(v) > MaxSandboxEnvValue {
			return invalidField("config.sandbox.env", "%s is %d bytes, more than %d", name, len(v), MaxSandboxEnvValue)
		}
	}
	if _, err := SandboxDisk(sb); err != nil {
		return err
	}
	if len(sb.Network.Allow) > 0 {
		if _, err := egress.ParseAllowlist(sb.Network.Allow); err != nil {
			return invalidField("config.sandbox.network", "%s", skilld.ErrorMessage(err))
		}
	}
	if sb.Rootfs != "" && !skilld.ValidRootfsName(sb.Rootfs) {
		return invalidField("config.sandbox.rootfs", "%q is not a root's name: letters, digits, '.', '_' and '-'", sb.Rootfs)
	}
	return nil
}

// SandboxDisk is an agent's disk limit in bytes (0 when it sets none).
func SandboxDisk(sb skilld.SandboxSettings) (int64, error) {
	if sb.Disk == "" {
		return 0, nil
	}
	n, err := sandbox.ParseSize(sb.Disk)
	if err != nil {
		return 0, invalidField("config.sandbox.disk", "%s", skilld.ErrorMessage(err))
	}
	if n < MinSandboxDisk {
		return 0, invalidField("config.sandbox.disk", "disk %q is less than %s", sb.Disk, sandbox.SizeText(MinSandboxDisk))
	}
	return n, nil
}

// MinSandboxDisk is the smallest workspace an agent may ask for.
const MinSandboxDisk = 8 << 20

// Bounds of an agent's sandbox environment.
const (
	MaxSandboxEnv      = 64
	MaxSandboxEnvValue = 4096
)

type AgentRef struct {
	ID string `json:"id" path:"id" jsonschema:"the agent's ID or name"`
}

// agent finds an agent by ID, then by name. Not finding it names the
// workspace searched: a caller with several workspaces learns where it
// looked.
func (s *Service) agent(ctx context.Context, a Actor, ref string) (*skilld.Agent, error) {
	ag, err := s.db.AgentGet(ctx, &store.AgentGetParams{WorkspaceID: a.WorkspaceID, ID: ref})
	if skilld.ErrorCode(err) == skilld.ENOTFOUND {
		ag, err = s.db.AgentGet(ctx, &store.AgentGetParams{WorkspaceID: a.WorkspaceID, Name: ref})
	}
	if skilld.ErrorCode(err) == skilld.ENOTFOUND {
		ws := a.WorkspaceID
		if w, werr := s.findWorkspace(ctx, a.WorkspaceID); werr == nil {
			ws = w.Name
		}
		return nil, &skilld.Error{Code: skilld.ENOTFOUND, Message: fmt.Sprintf("agent %q not found in workspace %q", ref, ws), Err: err}
	}
	return ag, err
}

type GetAgentParams struct{ AgentRef }

// GetAgent returns an agent (viewers and up).
func (s *Service) GetAgent(ctx context.Context, a Actor, p GetAgentParams) (*skilld.Agent, error) {
	if err := a.can(skilld.RoleViewer); err != nil {
		return nil, err
	}
	return s.agent(ctx, a, p.ID)
}

type ListAgentsParams struct {
	Skill     string `json:"skill,omitempty" query:"skill" jsonschema:"only the agents that have this skill (its ID or slug)"`
	Page      int    `json:"page,omitempty" query:"page"`
	PageSize  int    `json:"page_size,omitempty" query:"page_size"`
	PageToken string `json:"page_token,omitempty" query:"page_token" jsonschema:"the next_page_token of the previous page (instead of page)"`
}

type AgentPage struct {
	Items         []*skilld.Agent `json:"items"`
	Total         int             `json:"total"`
	Page          int             `json:"page"`
	PageSize      int             `json:"page_size"`
	NextPageToken string          `json:"next_page_token,omitempty"`
}

// ListAgents lists the workspace's agents by name (viewers and up), or
// only those that have a skill: what deleting the skill would change.
func (s *Service) ListAgents(ctx context.Context, a Actor, p ListAgentsParams) (*AgentPage, error) {
	if err := a.can(skilld.RoleViewer); err != nil {
		return nil, err
	}
	var skillID string
	if p.Skill != "" {
		sk, err := s.skill(ctx, a, p.Skill)
		if err != nil {
			return nil, err
		}
		skillID = sk.ID
	}
	query := filterDigest(a.WorkspaceID)
	if skillID != "" {
		query = filterDigest(a.WorkspaceID, skillID)
	}
	pg, norm, err := keyed(Page{Page: p.Page, PageSize: p.PageSize}, p.PageToken, "agents", query)
	if err != nil {
		return nil, err
	}
	items, total, err := s.db.AgentList(ctx, &store.AgentListParams{WorkspaceID: a.WorkspaceID, SkillID: skillID, Page: pg})
	if items == nil {
		items = []*skilld.Agent{}
	}
	out := &AgentPage{Items: items, Total: total, Page: norm.Page, PageSize: norm.PageSize}
	if len(items) > 0 {
		out.NextPageToken = nextToken(pg, len(items), total, "agents", query, items[len(items)-1].Name)
	}
	return out, err
}

type UpdateAgentParams struct {
	AgentRef
	Name *string `json:"name,omitempty"`
	// Config is a JSON Merge Patch (RFC 7396) of the agent's config: a
	// document, not an AgentConfig, because a member left out must stay
	// as it is while one set to 0, false or "" changes. null resets the
	// config to the defaults.
	Config json.RawMessage  `json:"config,omitempty" jsonschema:"a JSON Merge Patch (RFC 7396) of the config: objects merge, null removes a member, arrays and scalars replace; members left out stay"`
	Skills *[]AgentSkillRef `json:"skills,omitempty" jsonschema:"replaces the attached skills"`
}

// maxUpdateAttempts bounds how often an update is merged again into a
// config that another update changed meanwhile: each retry means another
// change went through, so this many changes of one agent at once all
// succeed.
const maxUpdateAttempts = 16

// UpdateAgent changes what is given (members and up): the name, the
// config merged with the patch, the skills replaced.
func (s *Service) UpdateAgent(ctx context.Context, a Actor, p UpdateAgentParams) (*skilld.Agent, error) {
	if err := a.can(skilld.RoleMember); err != nil {
		return nil, err
	}
	ag, err := s.agent(ctx, a, p.ID)
	if err != nil {
		return nil, err
	}
	up := &store.AgentUpdateParams{WorkspaceID: a.WorkspaceID, ID: ag.ID}
	if p.Name != nil {
		name, err := DisplayName("name", *p.Name)
		if err != nil {
			return nil, err
		}
		up.Name = &name
	}
	if p.Skills != nil {
		skills, err := s.resolveAgentSkills(ctx, a, *p.Skills)
		if err != nil {
			return nil, err
		}
		up.Skills = &skills
	}
	for attempt := 1; ; attempt++ {
		if len(p.Config) > 0 {
			// Merged into the config as read, and stored only if it is
			// still that config: two patches of different members both
			// take effect.
			cfg, err := patchConfig(ag.Config, p.Config)
			if err != nil {
				return nil, err
			}
			if err := checkAgentConfig(cfg); err != nil {
				return nil, err
			}
			cur := ag.Config
			up.Config, up.ExpectedConfig = &cfg, &cur
		}
		updated, err := s.db.AgentUpdate(ctx, up)
		if errors.Is(err, store.ErrAgentChanged) && attempt < maxUpdateAttempts {
			if ag, err = s.db.AgentGet(ctx, &store.AgentGetParams{WorkspaceID: a.WorkspaceID, ID: ag.ID}); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		s.event(ctx, a, a.WorkspaceID, "agent.updated", updated.ID)
		updated.Warnings = s.agentWarnings(updated)
		return updated, nil
	}
}

type DeleteAgentParams struct{ AgentRef }

// DeleteAgent deletes an agent (members and up); its past tasks remain.
func (s *Service) DeleteAgent(ctx context.Context, a Actor, p DeleteAgentParams) error {
	if err := a.can(skilld.RoleMember); err != nil {
		return err
	}
	ag, err := s.agent(ctx, a, p.ID)
	if err != nil {
		return err
	}
	if err := s.db.AgentDelete(ctx, &store.AgentDeleteParams{WorkspaceID: a.WorkspaceID, ID: ag.ID}); err != nil {
		return err
	}
	s.event(ctx, a, a.WorkspaceID, "agent.deleted", ag.ID)
	return nil
}

// patchConfig applies a JSON Merge Patch (RFC 7396) to an agent's config:
// objects merge member by member, recursively; null removes a member;
// anything else (a scalar, an array) replaces. It works on the JSON
// documents, so a member the patch leaves out is kept whatever its value,
// and one it sets to 0, false or "" is set so. The result is decoded as
// strictly as a request: an unknown member or a wrong type is EINVALID
// naming the field (config.context.window).
func patchConfig(cur skilld.AgentConfig, patch json.RawMessage) (skilld.AgentConfig, error) {
	target, err := decodeJSON(mustMarshal(cur))
	if err != nil {
		return skilld.AgentConfig{}, err
	}
	p, err := decodeJSON(patch)
	if err != nil {
		return skilld.AgentConfig{}, invalidField("config", "config is not JSON: %v", err)
	}
	merged := mergePatch(target, p)
	if field := unknownMember(merged, reflect.TypeFor[skilld.AgentConfig](), "config"); field != "" {
		return skilld.AgentConfig{}, invalidField(field, "unknown field %q", field)
	}
	var out skilld.AgentConfig
	dec := json.NewDecoder(bytes.NewReader(mustMarshal(merged)))
	if err := dec.Decode(&out); err != nil {
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) {
			field := "config"
			if typ.Field != "" {
				field += "." + typ.Field
			}
			return skilld.AgentConfig{}, invalidField(field, "%s must be %s, not %s", field, JSONKind(typ.Type), typ.Value)
		}
		return skilld.AgentConfig{}, invalidField("config", "config: %v", strings.TrimPrefix(err.Error(), "json: "))
	}
	return out, nil
}

// mergePatch is RFC 7396's MergePatch(target, patch).
func mergePatch(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
		} else {
			t[k] = mergePatch(t[k], v)
		}
	}
	return t
}

// decodeJSON decodes one JSON value, numbers kept as written.
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value")
	}
	return v, nil
}

// mustMarshal encodes values that always encode: configs and what
// decodeJSON made.
func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// unknownMember returns the path of the first member of doc (in name
// order) that type t has no field for, or "": the strictness of request
// decoding, with the whole path in the answer.
func unknownMember(doc any, t reflect.Type, path string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := doc.(map[string]any)
		if !ok {
			return "" // a wrong type: decoding names it
		}
		fields := map[string]reflect.Type{}
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.IsExported() && name != "-" {
				fields[cmp.Or(name, f.Name)] = f.Type
			}
		}
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			ft, ok := fields[k]
			if !ok {
				return path + "." + k
			}
			if bad := unknownMember(obj[k], ft, path+"."+k); bad != "" {
				return bad
			}
		}
	case reflect.Slice:
		arr, _ := doc.([]any)
		for _, v := range arr {
			if bad := unknownMember(v, t.Elem(), path); bad != "" {
				return bad
			}
		}
	case reflect.Map:
		obj, _ := doc.(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			if bad := unknownMember(obj[k], t.Elem(), path+"."+k); bad != "" {
				return bad
			}
		}
	}
	return ""
}

// JSONKind names a Go type the way a JSON caller thinks of it ("an
// integer", "an object"), for messages about a value of the wrong type.
func JSONKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return "a base64 string"
		}
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}
